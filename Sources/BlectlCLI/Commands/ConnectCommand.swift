import BlueZKit

/// `blectl connect ADDR`: connect, resolve services, print the GATT tree (with `--values`, the
/// values read into it: a profile `blectl serve` takes, profiles/blectl-profile.schema.json),
/// disconnect what we connected.
struct ConnectCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "connect",
        abstract: "Connect to a device and print its GATT services.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, waits until its GATT services are resolved, prints the service tree, then disconnects, unless the device was already connected.",
            "With --values, the tree holds the value of every readable characteristic and of every descriptor too, read one after the other within the timeout; an attribute that cannot be read (the device wants pairing, refuses it) gets value null and value_error, and the rest are still read. The JSON is then a profile blectl serve takes as it is: blectl connect ADDRESS --values > device.json && blectl serve device.json.",
        ]
    )

    @Argument(.device) var address: BluetoothAddress
    @Option(.connectionTimeout) var timeout: Duration = .seconds(20)
    @Option(.retries) var retries: Int = 0

    /// `--values`: read every readable value into the tree.
    @Flag("values", help: "Also read the value of every readable characteristic and of every descriptor into the tree (JSON: a profile blectl serve takes).")
    var values = false

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
            let read = values ? try await GATTValues.read(services, on: connected, context: context) : nil
            let address = device.address, adapter = device.adapter.name, wasConnected = connected.origin == .alreadyConnected
            switch printer.format {
            case .json:
                try await printer.result([Self.record(address, adapter: adapter, advertisement: device.current, wasConnected: wasConnected,
                                                      services: services, values: read).serialized()])
            case .text:
                try await printer.result(Self.text(address, adapter: adapter, advertisement: device.current, wasConnected: wasConnected,
                                                   services: services, values: read))
            }
        }
    }

    // MARK: - Records

    /// The tree as one object; with `values` (`--values`), each attribute read gets its
    /// ``GATTValues/members(_:)`` (`value`, and `value_error` when its read failed).
    static func record(_ address: BluetoothAddress, adapter: String, advertisement: Advertisement?, wasConnected: Bool,
                       services: [GATTService], values: GATTValues? = nil) -> JSONValue {
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
                        ] + GATTValues.members(values?[c.path]) + [
                            ("descriptors", .array(c.descriptors.map { d in
                                .object([("uuid", .string(d.uuid.shortString)), ("name", .optional(AssignedNumbers.name(for: d.uuid)))]
                                        + GATTValues.members(values?[d.path]))
                            })),
                        ])
                    })),
                ])
            })),
        ])
    }

    /// `key: value` lines for the device (keys as in JSON), then `services: N` and the tree:
    /// each service with `primary` or `secondary`, its characteristics with their flags, their
    /// descriptors; UUIDs with their SIG names; with `values`, each attribute read with its
    /// ``GATTValues/text(_:)`` at the end of its line.
    static func text(_ address: BluetoothAddress, adapter: String, advertisement: Advertisement?, wasConnected: Bool,
                     services: [GATTService], values: GATTValues? = nil) -> [String] {
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
                lines.append("    characteristic \(Records.named(c.uuid))  [\(c.flags.map(Records.printable).joined(separator: ", "))]"
                             + GATTValues.text(values?[c.path]))
                for d in c.descriptors { lines.append("      descriptor \(Records.named(d.uuid))" + GATTValues.text(values?[d.path])) }
            }
        }
        return lines
    }
}
