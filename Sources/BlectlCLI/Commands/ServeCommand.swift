import BlueZKit

/// `blectl serve PROFILE`: registers a GATT application made from a JSON profile (and an
/// advertisement of its services), answers centrals from it, prints what they do as JSON
/// Lines, notifies values given on standard input or on the profile's schedule, and
/// unregisters everything on every way out.
struct ServeCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "serve",
        abstract: "Serve GATT services from a JSON profile, advertise them, and print what centrals do.",
        discussion: [
            "Registers a GATT application of blectl's own with BlueZ (GattManager1; objects that only bluetoothd may call: any other caller gets AccessDenied), made from PROFILE, a JSON file (profiles/blectl-profile.schema.json; `blectl connect ADDRESS --values` prints one, so a probed device can be cloned), and advertises its services (the profile's name, and as many of its service UUIDs as fit 31 bytes) unless --no-advertise. Reads are answered from the profile's values (from the offset asked), writes replace them. Prints one JSON line per event: registered, connected and disconnected (a central's link), read, write (the central's address, the offset, request or command, the bytes), subscribed and unsubscribed, notified (a value sent), confirmed (an indication acknowledged), released (bluetoothd ended the advertisement: serving goes on).",
            "Standard input, when PROFILE is a file, takes one JSON object per line, {\"characteristic\": \"2a19\", \"value\": \"56\"} (with \"service\" when the UUID is in several services): the value becomes the characteristic's and is notified, or indicated, to subscribed centrals. A characteristic with \"notify_every\" in the profile is notified that often while subscribed. Serves until the timeout, inf by default, or a signal; the application and the advertisement are unregistered on every way out. A profile that cannot be served exits 65 (invalid_profile) naming its line and member, before anything is registered.",
        ]
    )

    /// How long registering may take, within `--timeout`.
    static let registrationLimit: Duration = .seconds(10)
    /// The largest profile read.
    static let maximumProfileSize = 4 << 20

    @Argument("profile", help: "The JSON profile to serve, or - for standard input.", parser: .inputSource)
    var profile: InputSource

    @Option(.timeout(help: "Stop serving after this many seconds, registration included; decimals allowed, more than 0, inf (the default) until interrupted.",
                     parser: .listeningSeconds(allowingZero: false)))
    var timeout: Duration = ListeningTimeout.infinite

    @Option("name", short: "n", valueName: "text", help: "The name to advertise instead of the profile's: at most 29 bytes of UTF-8.",
            parser: .nonEmpty(expecting: "a non-empty name"))
    var name: String?

    @Flag("no-advertise", help: "Do not advertise: serve GATT only (to centrals that find this host otherwise).")
    var noAdvertise = false

    func run(_ context: CommandContext) async throws {
        let adapter = try context.adapter
        let profile = try await withThrowingTaskGroup(of: ServeProfile?.self) { group in
            group.addTask { try await readProfile() }
            group.addTask {
                try await Task.sleep(until: context.deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let read = try await group.next(), let profile = read else {
                throw ServeProfile.Invalid(source: Self.sourceName(self.profile), line: 1, field: "",
                                           message: "not read whole within --timeout", status: .timedOut)
            }
            return profile
        }
        let advertisement = noAdvertise ? nil : try Self.advertisement(for: profile, name: name ?? profile.name, source: self.profile)
        let printer = context.printer
        let limit = min(context.remaining, Self.registrationLimit)
        try await adapter.withGATTApplication(profile.application, timeout: limit) { handle in
            let server = ServeSession(handle: handle, profile: profile, printer: printer)
            guard let advertisement else {
                try await server.run(advertising: nil, until: context.deadline, stdin: takesValues)
                return
            }
            try await adapter.withAdvertisement(advertisement, timeout: min(context.remaining, Self.registrationLimit)) { advertising in
                try await server.run(advertising: advertising, until: context.deadline, stdin: takesValues)
            }
        }
    }

    /// Whether standard input gives values: not when it gave the profile, nor when it was
    /// closed at start (as at its end, nothing ends).
    private var takesValues: Bool { profile != .standardInput && !StandardStreams.inputWasClosed }

    /// The profile, read whole and checked: ``ServeProfile/Invalid`` (65) for one that cannot
    /// be served; ``InputError`` (64) for one that cannot be opened.
    private func readProfile() async throws -> ServeProfile {
        if profile == .standardInput && StandardStreams.inputWasClosed {
            throw InputError(source: profile, reason: "it is closed", status: .usage)
        }
        let input = try FileInput.open(profile)
        defer { input.close() }
        var bytes: [UInt8] = []
        let source = Self.sourceName(profile)
        while true {
            let chunk = try await input.read(upTo: 65536)
            if chunk.isEmpty { break }
            bytes += chunk
            guard bytes.count <= Self.maximumProfileSize else {
                throw ServeProfile.Invalid(source: source, line: 1, field: "", message: "larger than \(Self.maximumProfileSize >> 20) MiB")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ServeProfile.Invalid(source: source, line: 1, field: "", message: "not UTF-8 text")
        }
        return try ServeProfile.parse(text, source: source)
    }

    /// A connectable advertisement of the profile: `name`, and the service UUIDs in the
    /// profile's order as long as they fit beside it.
    /// - Throws: ``ServeProfile/Invalid`` for a name that cannot fit.
    static func advertisement(for profile: ServeProfile, name: String?, source: InputSource) throws -> LEAdvertisement {
        var advertisement = LEAdvertisement(type: .peripheral, localName: name)
        if let rejection = nameRejection(advertisement) {
            throw ServeProfile.Invalid(source: Self.sourceName(source), line: profile.nameLine, field: "name",
                                       message: rejection.kind == .doesNotFit
                                           ? "\(name?.utf8.count ?? 0) bytes: an advertised name holds at most 29 (--name gives another, --no-advertise none)"
                                           : rejection.reason)
        }
        for service in profile.application.services where service.primary && !advertisement.serviceUUIDs.contains(service.uuid) {
            var candidate = advertisement
            candidate.serviceUUIDs.append(service.uuid)
            if Self.fits(candidate) { advertisement = candidate }
        }
        return advertisement
    }

    /// Why the advertisement cannot go out (it does not fit a legacy advertisement, the
    /// adapter discoverable, or bluetoothd would refuse it), or nil.
    private static func nameRejection(_ advertisement: LEAdvertisement) -> LEAdvertisement.Rejection? {
        do throws(BLEError) {
            _ = try advertisement.legacyPayload(adapterDiscoverable: true)
            return nil
        } catch {
            guard case .advertisementRejected(let rejection) = error else { return nil }
            return rejection
        }
    }

    /// Whether the advertisement fits a legacy advertisement, the adapter discoverable.
    private static func fits(_ advertisement: LEAdvertisement) -> Bool { nameRejection(advertisement) == nil }

    /// The profile as messages name it.
    static func sourceName(_ source: InputSource) -> String {
        source == .standardInput ? "standard input" : "'\(source)'"
    }

    /// Refuses a --name that cannot be advertised, before anything is sent.
    func validate() throws(UsageError) {
        guard let name, !noAdvertise, let rejection = Self.nameRejection(LEAdvertisement(type: .peripheral, localName: name)) else { return }
        throw UsageError(rejection.kind == .doesNotFit ? "--name does not fit: \(name.utf8.count) bytes, an advertised name holds at most 29"
                                                       : "--name refused: \(rejection.reason)")
    }
}
