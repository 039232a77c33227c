import BlueZKit

/// `blectl connect ADDR`: connect, resolve services, print the GATT tree, disconnect what we connected.
struct ConnectCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "connect",
        abstract: "Connect to a device and print its GATT services.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, waits until its GATT services are resolved, prints the service tree, then disconnects, unless the device was already connected.",
        ]
    )

    @Argument(.device) var address: BluetoothAddress
    @Option(.connectionTimeout) var timeout: Duration = .seconds(20)
    @Option(.retries) var retries: Int = 0

    var deviceAddress: BluetoothAddress? { address }

    func run(_ context: CommandContext) async throws {
        let printer = context.printer
        try await context.withConnectedDevice(address) { connected in
            let device = connected.device
            // Let GATT objects that trail ServicesResolved arrive.
            if connected.services.isEmpty {
                _ = try? await connected.service(.genericAccess, timeout: min(ConnectedDevice.serviceSettleTime, context.remaining))
            }
            let services = connected.services
            let address = device.address, adapter = device.adapter.name, wasConnected = connected.origin == .alreadyConnected
            switch printer.format {
            case .json:
                try await printer.result([Self.record(address, adapter: adapter, advertisement: device.current, wasConnected: wasConnected,
                                                      services: services).serialized()])
            case .text:
                try await printer.result(Self.text(address, adapter: adapter, advertisement: device.current, wasConnected: wasConnected,
                                                   services: services))
            }
        }
    }

    // MARK: - Records

    static func record(_ address: BluetoothAddress, adapter: String, advertisement: Advertisement?, wasConnected: Bool,
                       services: [GATTService]) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("name", .optional(advertisement?.name)),
            ("address_type", .optional(advertisement?.addressType)),
            ("adapter", .string(adapter)),
            ("was_connected", .bool(wasConnected)),
            ("services", .array(services.map { service in
                .object([
                    ("uuid", .string(service.uuid.shortString)),
                    ("name", .optional(AssignedNumbers.name(for: service.uuid))),
                    ("primary", .bool(service.primary)),
                    ("characteristics", .array(service.characteristics.map { c in
                        .object([
                            ("uuid", .string(c.uuid.shortString)),
                            ("name", .optional(AssignedNumbers.name(for: c.uuid))),
                            ("flags", .array(c.flags.map { .string($0) })),
                            ("descriptors", .array(c.descriptors.map { d in
                                .object([("uuid", .string(d.uuid.shortString)), ("name", .optional(AssignedNumbers.name(for: d.uuid)))])
                            })),
                        ])
                    })),
                ])
            })),
        ])
    }

    /// `key: value` lines for the device (keys as in JSON), then `services: N` and the tree:
    /// each service with `primary` or `secondary`, its characteristics with their flags, their
    /// descriptors; UUIDs with their SIG names.
    static func text(_ address: BluetoothAddress, adapter: String, advertisement: Advertisement?, wasConnected: Bool,
                     services: [GATTService]) -> [String] {
        var lines = Records.keyValueLines([
            ("address", address.description),
            ("name", advertisement?.name.map { Records.printable($0) } ?? "-"),
            ("address_type", advertisement?.addressType.map(Records.printable) ?? "-"),
            ("adapter", Records.printable(adapter)),
            ("was_connected", Records.yesNo(wasConnected)),
            ("services", String(services.count)),
        ])
        for service in services {
            lines.append("  service \(Records.named(service.uuid))  \(service.primary ? "primary" : "secondary")")
            for c in service.characteristics {
                lines.append("    characteristic \(Records.named(c.uuid))  [\(c.flags.map(Records.printable).joined(separator: ", "))]")
                for d in c.descriptors { lines.append("      descriptor \(Records.named(d.uuid))") }
            }
        }
        return lines
    }
}
