import BlueZKit
import DBusKit

/// One run of `blectl serve` once registered: the events printed, the values standard input
/// gives and those of the profile's schedules notified, until the deadline or stdout closes.
struct ServeSession: Sendable {
    let handle: GATTApplicationHandle
    let profile: ServeProfile
    let printer: Printer
    /// The characteristics a central is subscribed to now.
    private let subscribed = Lock(Set<ObjectPath>())

    /// The progress line's phase once registered (on a terminal).
    static let serving = "serving GATT"

    /// The longest line of standard input taken.
    static let maximumLineLength = 65536

    init(handle: GATTApplicationHandle, profile: ServeProfile, printer: Printer) {
        self.handle = handle
        self.profile = profile
        self.printer = printer
    }

    /// Prints `registered`, then serves until `deadline`; `stdin`: values from standard input.
    func run(advertising: AdvertisingHandle?, until deadline: ContinuousClock.Instant, stdin: Bool) async throws {
        try await print(registered(advertising))
        StatusLine.shared.show(Self.serving, detail: "0 requests")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await report(handle.events) }
            if let advertising { group.addTask { try await watchRelease(advertising.events) } }
            if stdin { group.addTask { try await readValues() } }
            for schedule in profile.schedules { group.addTask { try await notify(on: schedule) } }
            group.addTask { try await Task.sleep(until: deadline, clock: .continuous) }
            group.addTask { try await Printer.waitUntilStdoutClosed() }
            try await group.next()
            group.cancelAll()
        }
    }

    private func print(_ record: JSONValue) async throws {
        try await printer.results([AdvertiseCommand.line(record, format: printer.format)])
    }

    /// Prints each event of the application until its stream ends (then waits for the end).
    private func report(_ events: AsyncThrowingStream<GATTServerEvent, any Error>) async throws {
        var requests = 0
        for try await event in events {
            switch event {
            case .subscribed(let attribute): subscribed.withLock { _ = $0.insert(attribute.path) }
            case .unsubscribed(let attribute): subscribed.withLock { _ = $0.remove(attribute.path) }
            case .read, .written: requests += 1
            default: break
            }
            StatusLine.shared.show(Self.serving, detail: "\(requests) request\(requests == 1 ? "" : "s")")
            try await print(Self.record(event))
        }
        try await Task.sleep(until: .now + ListeningTimeout.infinite, clock: .continuous)
    }

    /// Prints `released` when bluetoothd ends the advertisement; serving goes on. bluetoothd or
    /// the adapter going ends the application's events too, which report it (stage `serve`).
    private func watchRelease(_ events: AsyncThrowingStream<AdvertisingEvent, any Error>) async throws {
        do {
            for try await event in events where event == .released {
                try await print(AdvertiseCommand.record(.released))
            }
        } catch is BLEError {}
        try await Task.sleep(until: .now + ListeningTimeout.infinite, clock: .continuous)
    }

    /// Sets, and notifies, the values standard input's lines give; a line that gives none is
    /// reported on stderr and skipped. At the end of the input, waits.
    private func readValues() async throws {
        let input = try FileInput.open(.standardInput)
        defer { input.close() }
        try await input.forEachLine(maximumLength: Self.maximumLineLength) { number, bytes in
            let outcome: Result<(GATTAttribute, [UInt8]), ValueLineError>
            if let bytes {
                guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { return }
                outcome = value(of: bytes)
            } else {
                outcome = .failure(ValueLineError("longer than \(Self.maximumLineLength) bytes"))
            }
            switch outcome {
            case .success(let (attribute, value)):
                try await setValue(value, of: attribute)
            case .failure(let error):
                let text = "standard input line \(number): \(error.message); expected {\"characteristic\": \"UUID\", \"value\": \"HEX\"}"
                printer.diagnostic(.object([("event", .string("ignored_line")), ("line", .int(number)), ("message", .string(text))]), text: text)
            }
        }
        try await Task.sleep(until: .now + ListeningTimeout.infinite, clock: .continuous)
    }

    private struct ValueLineError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// The characteristic and value one line names.
    private func value(of line: ArraySlice<UInt8>) -> Result<(GATTAttribute, [UInt8]), ValueLineError> {
        guard let text = String(validating: line, as: UTF8.self), let node = try? JSONDocument.parse(text),
              case .object(let members) = node.value else {
            return .failure(ValueLineError("not a JSON object"))
        }
        if let unknown = members.first(where: { !["characteristic", "service", "value"].contains($0.key) }) {
            return .failure(ValueLineError("unknown member \"\(Records.printable(unknown.key))\""))
        }
        guard let characteristicNode = node["characteristic"] else { return .failure(ValueLineError("\"characteristic\" is missing")) }
        guard case .string(let uuidText) = characteristicNode.value, let uuid = BluetoothUUID(uuidText) else {
            return .failure(ValueLineError("\"characteristic\" is not a UUID"))
        }
        var service: BluetoothUUID?
        if let serviceNode = node["service"] {
            guard case .string(let serviceText) = serviceNode.value, let parsed = BluetoothUUID(serviceText) else {
                return .failure(ValueLineError("\"service\" is not a UUID"))
            }
            service = parsed
        }
        guard let valueNode = node["value"] else { return .failure(ValueLineError("\"value\" is missing")) }
        // As a value on the command line: 0102ff, 01:02:ff, 0x0102ff.
        guard case .string(let hex) = valueNode.value, let value = try? ValueParser.hexBytes.parse(hex) else {
            return .failure(ValueLineError("\"value\" is not 1 to 512 hex bytes like 0102ff, 01:02:ff or 0x0102ff"))
        }
        let matches = handle.characteristics(uuid, in: service)
        switch matches.count {
        case 0: return .failure(ValueLineError("no characteristic \(uuid.named)" + (service.map { " in service \($0.named)" } ?? "") + " is served"))
        case 1: return .success((matches[0], value))
        default:
            guard service == nil, Set(matches.map(\.service)).count > 1 else {
                return .failure(ValueLineError("characteristic \(uuid.named) is served more than once in service \(matches[0].service.named): "
                                               + "standard input cannot tell them apart"))
            }
            return .failure(ValueLineError("characteristic \(uuid.named) is in several services: give \"service\""))
        }
    }

    /// Every `interval`, while a central is subscribed, the next of the schedule's values (or
    /// the value as it is), notified.
    private func notify(on schedule: ServeProfile.Schedule) async throws {
        let attribute = handle.attributes.first { $0.index.service == schedule.service && $0.index.characteristic == schedule.characteristic
            && $0.descriptor == nil }!
        var next = 0
        while true {
            try await Task.sleep(for: schedule.interval)
            guard subscribed.withLock({ $0.contains(attribute.path) }) else { continue }
            var value = handle.value(of: attribute)
            if !schedule.values.isEmpty {
                value = schedule.values[next % schedule.values.count]
                next += 1
            }
            try await setValue(value, of: attribute)
        }
    }

    /// The value becomes the characteristic's and goes to subscribed centrals; `notified` says
    /// so, printed first, so that an indication's `confirmed` comes after it.
    private func setValue(_ value: [UInt8], of attribute: GATTAttribute) async throws {
        let isSubscribed = subscribed.withLock { $0.contains(attribute.path) }
        try await print(AdvertiseCommand.event("notified", Self.place(attribute) + [
            ("value", .string(value.hexString)), ("subscribed", .bool(isSubscribed)),
        ]))
        try await handle.setValue(value, of: attribute)
    }

    // MARK: - Records

    /// `registered`: the adapter, the application's path, its services, what is advertised,
    /// what of the profile bluetoothd serves itself, and what the profile's source could not read.
    func registered(_ advertising: AdvertisingHandle?) -> JSONValue {
        let services = handle.application.services
        return AdvertiseCommand.event("registered", [
            ("adapter", .string(handle.adapter.name)),
            ("path", .string(handle.path.rawValue)),
            ("services", .array(services.map { .string($0.uuid.shortString) })),
            ("characteristics", .int(services.reduce(0) { $0 + $1.characteristics.count })),
            ("advertising", .bool(advertising != nil)),
            ("name", .optional(advertising?.advertisement.localName)),
            ("advertised_services", .array((advertising?.advertisement.serviceUUIDs ?? []).map { .string($0.shortString) })),
            ("skipped", .array(profile.skipped.map { skipped in
                .object([("line", .int(skipped.line)), ("field", .string(skipped.field)), ("uuid", .string(skipped.uuid.shortString)),
                         ("reason", .string(skipped.reason))])
            })),
            ("unread", .array(profile.unread.map { unread in
                .object([("line", .int(unread.line)), ("field", .string(unread.field)), ("uuid", .string(unread.uuid.shortString)),
                         ("value_error", .string(unread.reason))])
            })),
        ])
    }

    /// The service, characteristic and descriptor (null for a characteristic's) of an event.
    static func place(_ attribute: GATTAttribute) -> [(String, JSONValue)] {
        [("service", .string(attribute.service.shortString)), ("characteristic", .string(attribute.characteristic.shortString)),
         ("descriptor", attribute.descriptor.map { .string($0.shortString) } ?? .null)]
    }

    static func record(_ event: GATTServerEvent) -> JSONValue {
        switch event {
        case .connected(let address): AdvertiseCommand.record(.connected(address))
        case .disconnected(let address): AdvertiseCommand.record(.disconnected(address))
        case .subscribed(let attribute): AdvertiseCommand.event("subscribed", place(attribute))
        case .unsubscribed(let attribute): AdvertiseCommand.event("unsubscribed", place(attribute))
        case .confirmed(let attribute): AdvertiseCommand.event("confirmed", place(attribute))
        case .read(let request): AdvertiseCommand.event("read", fields(request, of: event))
        case .written(let request): AdvertiseCommand.event("write", fields(request, of: event))
        }
    }

    /// A read's or write's fields: the central, the attribute, the offset, a write's type, the bytes.
    private static func fields(_ request: GATTServerRequest, of event: GATTServerEvent) -> [(String, JSONValue)] {
        var fields: [(String, JSONValue)] = [("device", .optional(request.device?.description))] + place(request.attribute)
        fields.append(("offset", .int(request.offset)))
        if case .written = event { fields.append(("type", .optional(request.writeType?.rawValue))) }
        fields.append(("value", .string(request.value.hexString)))
        return fields
    }
}
