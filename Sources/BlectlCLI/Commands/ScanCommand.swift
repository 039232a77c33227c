import BlueZKit

/// `blectl scan`: JSON Lines, one per device seen during this scan (or per update with `--updates`).
struct ScanCommand: BlectlSubcommand {
    static let timeoutOption = Option<Duration>(
        "timeout", short: "t", valueName: "seconds",
        help: "Stop scanning after this many seconds; decimals allowed, inf to scan until interrupted.",
        parser: .listeningSeconds, default: ScanOptions.defaultTimeout
    )
    static let name = Option<String>(
        "name", short: "n", valueName: "substring",
        help: "Only report devices whose name contains this text, ignoring case. Repeat to accept any of several.",
        parser: .nonEmpty(expecting: "a non-empty part of a device name"), repeatable: true
    )
    static let service = Option<BluetoothUUID>(
        "service", short: "s", valueName: "uuid",
        help: "Only report devices advertising this service UUID, such as 180f. Repeat to accept any of several.",
        parser: .uuid, repeatable: true
    )
    static let rssiMin = Option<Int16>(
        "rssi-min", valueName: "dbm",
        help: "Only report devices heard at this signal strength or stronger, in dBm from \(ScanOptions.rssiRange.lowerBound) to \(ScanOptions.rssiRange.upperBound).",
        parser: .dBm(in: ScanOptions.rssiRange)
    )
    static let updates = Flag(
        "updates",
        help: "Print a line for every advertisement update, not just the first sighting of each device."
    )

    static let command = CommandSpec(
        name: "scan",
        abstract: "Scan for Bluetooth LE devices and print each one found.",
        discussion: [
            "Prints one JSON line per device as it is first seen during this scan, until the timeout; reaching the timeout is success, even with no device found. Devices BlueZ only remembers from earlier are not printed. A device must pass every kind of filter given (checked by BlueZ and again by blectl). --timeout 0 connects, checks the adapter and prints nothing.",
        ],
        options: [timeoutOption.spec, name.spec, service.spec, rssiMin.spec, updates.spec]
    )

    init(from values: ParsedValues) throws(UsageError) {
        options = ScanOptions(
            timeout: try values.requiredValue(of: Self.timeoutOption),
            names: try values.values(of: Self.name),
            services: try values.values(of: Self.service),
            rssiMin: try values.value(of: Self.rssiMin),
            updates: values.isSet(Self.updates)
        )
    }

    var options: ScanOptions
    var timeout: Duration { options.timeout }

    init(options: ScanOptions) { self.options = options }

    func run(_ context: CommandContext) async throws {
        guard options.timeout > .zero else { return }
        let filter = DiscoveryFilter(uuids: options.services, rssiMin: options.rssiMin, names: options.names,
                                     duplicateData: options.updates)
        let printer = context.printer
        let adapterName = try context.adapter.name
        // The scan ends at the command's deadline: --timeout counts from blectl's start.
        let deadline = context.deadline
        let status = StatusLine.shared
        status.show("scanning", detail: "0 devices")
        try await context.adapter.withDiscovery(filter: filter, setupTimeout: context.remaining) { stream in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    var reported = Set<BluetoothAddress>()
                    for try await batch in stream {
                        var lines = [String]()
                        lines.reserveCapacity(batch.count)
                        for advertisement in batch {
                            let new = reported.insert(advertisement.address).inserted
                            guard options.updates || new else { continue }
                            switch printer.format {
                            case .json: lines.append(Self.record(advertisement, adapter: adapterName).serialized())
                            case .text: lines.append(Self.text(advertisement))
                            }
                        }
                        status.show("scanning", detail: reported.count == 1 ? "1 device" : "\(reported.count) devices")
                        try await printer.results(lines)
                    }
                }
                group.addTask { try await Task.sleep(until: deadline, clock: .continuous) }
                // Between lines, a reader that has gone ends the scan too.
                group.addTask { try await Printer.waitUntilStdoutClosed() }
                // Reaching the scan length is success; an error from the stream (adapter
                // powered off, bluetoothd gone) or a closed stdout ends the scan after what
                // was printed.
                try await group.next()
                group.cancelAll()
            }
        }
    }

    // MARK: - Records

    static func record(_ a: Advertisement, adapter: String) -> JSONValue {
        .object([
            ("address", .string(a.address.description)),
            ("address_type", .optional(a.addressType)),
            ("name", .optional(a.name)),
            ("rssi", .optional(a.rssi)),
            ("tx_power", .optional(a.txPower)),
            ("uuids", .array(a.uuids.map { .string($0.shortString) })),
            ("manufacturer_data", Records.manufacturerData(a.manufacturerData)),
            ("service_data", Records.serviceData(a.serviceData)),
            ("connected", .bool(a.connected)),
            ("adapter", .string(adapter)),
        ])
    }

    static func text(_ a: Advertisement) -> String {
        let rssi = a.rssi.map { "\($0) dBm" } ?? "-"
        let name = a.name.map { Records.printable($0) } ?? "(no name)"
        let uuids = a.uuids.isEmpty ? "" : "  [" + a.uuids.map(\.shortString).joined(separator: ", ") + "]"
        return "\(a.address)  \(Records.pad(a.addressType ?? "-", 6))  \(Records.pad(rssi, 8))  \(name)\(uuids)"
    }
}

/// Options of `blectl scan`.
public struct ScanOptions: Sendable, Equatable {
    /// How long a scan lasts when `--timeout` is not given: 10 s.
    public static let defaultTimeout = Duration.seconds(10)
    /// The accepted `--rssi-min` range in dBm (BlueZ doc/org.bluez.Adapter.rst,
    /// SetDiscoveryFilter `RSSI`).
    public static let rssiRange: ClosedRange<Int16> = -127...20

    /// `--timeout`: how long to scan, 0 to 86400 s, or ``ListeningTimeout/infinite`` (`inf`).
    public var timeout: Duration
    /// `--name`, repeatable: report only devices whose name contains one of these
    /// (case-insensitive substring match); empty means no name filter. Never contains
    /// an empty string.
    public var names: [String]
    /// `--service`, repeatable: report only devices advertising one of these service
    /// UUIDs; empty means no service filter.
    public var services: [BluetoothUUID]
    /// `--rssi-min`: report only devices heard at this RSSI (dBm) or stronger, within
    /// `rssiRange`; `nil` means no threshold.
    public var rssiMin: Int16?
    /// `--updates`: print a line for every advertisement update, not just the first
    /// sighting of each device.
    public var updates: Bool

    public init(
        timeout: Duration = ScanOptions.defaultTimeout, names: [String] = [],
        services: [BluetoothUUID] = [], rssiMin: Int16? = nil, updates: Bool = false
    ) {
        self.timeout = timeout
        self.names = names
        self.services = services
        self.rssiMin = rssiMin
        self.updates = updates
    }
}
