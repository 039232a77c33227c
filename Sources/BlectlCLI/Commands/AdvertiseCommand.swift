import BlueZKit

/// `blectl advertise`: registers an advertisement of blectl's own with bluetoothd, prints
/// JSON Lines events (registered, connected, disconnected, released) until the timeout or a
/// signal, and unregisters it on every way out.
struct AdvertiseCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "advertise",
        abstract: "Advertise this host over Bluetooth LE, and print what happens.",
        discussion: [
            "Registers an advertisement of blectl's own with BlueZ (an org.bluez.LEAdvertisement1 object that only bluetoothd may read: any other caller gets AccessDenied) and prints one JSON line per event: registered (what is advertised and the bytes it takes), connected and disconnected (a central's link to this adapter coming up and going down), released (bluetoothd ended the advertisement itself). Advertises until the timeout, inf by default, or a signal; the advertisement is unregistered on every way out.",
            "The data must fit a legacy advertisement: 31 bytes of advertising data (the Flags, when the adapter is discoverable or --discoverable is given, the service UUIDs, manufacturer data, service data, Appearance and TX Power fields, in that order) and 31 of scan response (the name, at most 29 bytes). What does not fit is refused before anything is registered, naming the option, with status 64. No free advertising instance, or bluetoothd's NotPermitted, exits 5; another refusal by bluetoothd exits 1 (advertisement_refused). bluetoothd releasing the advertisement exits 1 (released), or 69 when bluetoothd or the adapter went away with it.",
        ]
    )

    /// How long registering may take (reading SupportedInstances, RegisterAdvertisement,
    /// which bluetoothd answers once it has read the object back), within `--timeout`.
    static let registrationLimit: Duration = .seconds(10)

    /// `--timeout`: how long to advertise, registration included; ``ListeningTimeout/infinite``
    /// (`inf`) by default: an advertiser is a service for others, which runs until stopped.
    @Option(.timeout(help: "Stop advertising after this many seconds, registration included; decimals allowed, more than 0, inf (the default) until interrupted.",
                     parser: .listeningSeconds(allowingZero: false)))
    var timeout: Duration = ListeningTimeout.infinite

    /// `--name`: LocalName, in the scan response.
    @Option("name", short: "n", valueName: "text", help: "The name to advertise (LocalName), in the scan response: at most 29 bytes of UTF-8.",
            parser: .nonEmpty(expecting: "a non-empty name"))
    var name: String?

    /// `--service`, repeatable: ServiceUUIDs, in order.
    @Option("service", short: "s", valueName: "uuid", help: "A service UUID to advertise (ServiceUUIDs), such as 180f: 2 bytes for a 16-bit UUID, 16 for others. Repeat for several.",
            parser: .uuid)
    var services: [BluetoothUUID]

    /// `--manufacturer-data`, repeatable: ManufacturerData, in order.
    @Option("manufacturer-data", valueName: "id:hex",
            help: "Manufacturer data to advertise (ManufacturerData): the company identifier in hex, a colon and the bytes in hex, such as 004c:0215. Repeat for several companies.",
            parser: .manufacturerData)
    var manufacturerData: [LEAdvertisement.ManufacturerData]

    /// `--service-data`, repeatable: ServiceData, in order.
    @Option("service-data", valueName: "uuid:hex",
            help: "Service data to advertise (ServiceData): the service UUID, a colon and the bytes in hex, such as 180f:64. Repeat for several services.",
            parser: .serviceData)
    var serviceData: [LEAdvertisement.ServiceData]

    /// `--tx-power`: Includes "tx-power".
    @Flag("tx-power", help: "Advertise the controller's transmit power (Includes tx-power): 3 bytes, added by the kernel.")
    var txPower = false

    /// `--appearance`: Appearance.
    @Option("appearance", valueName: "n",
            help: "The GAP Appearance to advertise, 0 to 65535 in decimal or in hex after 0x, such as 0x03c1 (keyboard).",
            parser: .decimalOrHex16)
    var appearance: UInt16?

    /// `--discoverable`: Discoverable true.
    @Flag("discoverable", help: "Advertise as LE General Discoverable (Discoverable, the Flags field) whatever the adapter's own setting; not with --type broadcast.")
    var discoverable = false

    /// `--type`: Type.
    @Option("type", valueName: "type",
            help: "peripheral: centrals may connect; broadcast: nobody can (Type).",
            parser: .choice)
    var type: LEAdvertisement.Kind = .peripheral

    /// The advertisement the options describe.
    var advertisement: LEAdvertisement {
        LEAdvertisement(type: type, localName: name, serviceUUIDs: services, manufacturerData: manufacturerData,
                        serviceData: serviceData, includes: txPower ? [.txPower] : [], appearance: appearance,
                        discoverable: discoverable ? true : nil)
    }

    /// Refuses, before anything is sent, an advertisement that cannot fit even with the
    /// adapter not discoverable (the run checks again with its actual setting), or that
    /// bluetoothd would refuse, naming the option.
    func validate() throws(UsageError) {
        do throws(BLEError) {
            _ = try advertisement.legacyPayload(adapterDiscoverable: false)
        } catch {
            guard case .advertisementRejected(let rejection) = error else { return }
            throw UsageError(Self.message(rejection))
        }
    }

    func run(_ context: CommandContext) async throws {
        let adapter = try context.adapter
        let printer = context.printer
        let deadline = context.deadline
        try await adapter.withAdvertisement(advertisement, timeout: min(context.remaining, Self.registrationLimit)) { handle in
            try await printer.results([Self.line(Self.registered(handle), format: printer.format)])
            StatusLine.shared.show("advertising")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await Self.report(handle.events, printer: printer) }
                group.addTask { try await Task.sleep(until: deadline, clock: .continuous) }
                group.addTask { try await Printer.waitUntilStdoutClosed() }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Prints each event until the stream ends; bluetoothd's Release ends the command with
    /// ``BLEError/released(_:)``.
    private static func report(_ events: AsyncThrowingStream<AdvertisingEvent, any Error>, printer: Printer) async throws {
        for try await event in events {
            try await printer.results([line(record(event), format: printer.format)])
            if event == .released { throw BLEError.released(BLEOperation(.advertise)) }
        }
        // Ended without Release (the body is ending): nothing more will come.
        try await Task.sleep(until: .now + ListeningTimeout.infinite, clock: .continuous)
    }

    /// The rejection's sentence, naming the option: `--manufacturer-data 0x004c does not fit: …`.
    static func message(_ rejection: LEAdvertisement.Rejection) -> String {
        let option: String = switch rejection.property {
        case "ServiceUUIDs": "--service"
        case "ManufacturerData": "--manufacturer-data"
        case "ServiceData": "--service-data"
        case "LocalName": "--name"
        case "Appearance": "--appearance"
        case "Discoverable": "--discoverable"
        case "Includes": "--" + (rejection.entry ?? "")
        case "Flags": "the Flags field (the adapter is discoverable)"
        default: rejection.property
        }
        let entry = rejection.property == "Includes" ? nil : rejection.entry
        let field = entry.map { "\(option) \($0)" } ?? option
        return switch rejection.kind {
        case .doesNotFit: "\(field) does not fit: \(rejection.reason)"
        case .invalid, .noFreeInstance: "\(field) refused: \(rejection.reason)"
        }
    }

    // MARK: - Records

    /// A record as its line: JSON, or `key: value` pairs for people.
    static func line(_ record: JSONValue, format: OutputFormat) -> String {
        guard format == .text else { return record.serialized() }
        guard case .object(let members) = record else {
            if case .string(let s) = record { return Records.printable(s) }
            return record.serialized()
        }
        return members.map { key, value in
            let text: String = switch value {
            case .string(let s): Records.printable(s)
            case .null: "-"
            case .array(let items) where items.isEmpty: "-"
            case .object(let entries) where entries.isEmpty: "-"
            case .array(let items): items.map { line($0, format: format) }.joined(separator: ",")
            case .object(let entries): entries.map { "\($0.0)=\(line($0.1, format: format))" }.joined(separator: ",")
            default: value.serialized()
            }
            return "\(key): \(text)"
        }.joined(separator: "  ")
    }

    /// `event` and `time` (RFC 3339, UTC, milliseconds), then `fields`.
    static func event(_ name: String, _ fields: [(String, JSONValue)] = []) -> JSONValue {
        .object([("event", .string(name)), ("time", .string(Records.rfc3339(sinceEpoch: Records.wallClockNow())))] + fields)
    }

    /// `registered`: the adapter, the object's path, what is advertised (as given), and the
    /// bytes the advertising data and scan response take (of 31 each).
    static func registered(_ handle: AdvertisingHandle) -> JSONValue {
        let ad = handle.advertisement
        return event("registered", [
            ("adapter", .string(handle.adapter.name)),
            ("path", .string(handle.path.rawValue)),
            ("type", .string(ad.type.rawValue)),
            ("name", .optional(ad.localName)),
            ("services", .array(ad.serviceUUIDs.map { .string($0.shortString) })),
            ("manufacturer_data", .object(ad.manufacturerData.map { (Records.hex4($0.company), .string($0.data.hexString)) })),
            ("service_data", .object(ad.serviceData.map { ($0.uuid.shortString, .string($0.data.hexString)) })),
            ("appearance", ad.appearance.map { .int(Int($0)) } ?? .null),
            ("tx_power", .bool(ad.includes.contains(.txPower))),
            ("discoverable", .bool(ad.discoverable == true)),
            ("adv_data_bytes", .int(handle.payload.advertisingDataSize)),
            ("scan_response_bytes", .int(handle.payload.scanResponseSize)),
        ])
    }

    /// `connected`/`disconnected` with the central's address, or `released`.
    static func record(_ event: AdvertisingEvent) -> JSONValue {
        switch event {
        case .connected(let address): Self.event("connected", [("address", .string(address.description))])
        case .disconnected(let address): Self.event("disconnected", [("address", .string(address.description))])
        case .released: Self.event("released")
        }
    }
}
