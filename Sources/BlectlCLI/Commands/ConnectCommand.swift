import BlueZKit

/// `blectl connect ADDR`: connect, resolve services, print the GATT tree, disconnect what we connected.
struct ConnectCommand: BlectlSubcommand {
    static let command = CommandSpec(
        name: "connect",
        abstract: "Connect to a device and print its GATT services.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, waits until its GATT services are resolved, prints the service tree, then disconnects, unless the device was already connected.",
        ],
        arguments: [DeviceOptions.addressArgument.spec],
        options: [DeviceOptions.timeoutOption.spec]
    )

    var options: DeviceOptions
    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(options: DeviceOptions) { self.options = options }

    init(from values: ParsedValues) throws(UsageError) {
        options = try DeviceOptions(from: values)
    }

    func run(_ context: CommandContext) async throws {
        let printer = context.printer
        try await context.withConnectedDevice(options.address) { connected in
            let device = connected.device
            // Let GATT objects that trail ServicesResolved arrive.
            if connected.services.isEmpty {
                _ = try? await connected.service(.genericAccess, timeout: min(ConnectedDevice.serviceSettleTime, context.remaining))
            }
            let services = connected.services
            switch printer.format {
            case .json:
                try await printer.result([Self.record(device, advertisement: device.current, origin: connected.origin, services: services).serialized()])
            case .text:
                try await printer.result(Self.text(device, advertisement: device.current, services: services))
            }
        }
    }

    // MARK: - Records

    static func record(_ device: Device, advertisement: Advertisement?, origin: ConnectionOrigin, services: [GATTService]) -> JSONValue {
        .object([
            ("address", .string(device.address.description)),
            ("name", .optional(advertisement?.name)),
            ("address_type", .optional(advertisement?.addressType)),
            ("adapter", .string(device.adapter.name)),
            ("was_connected", .bool(origin == .alreadyConnected)),
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

    static func text(_ device: Device, advertisement: Advertisement?, services: [GATTService]) -> [String] {
        var lines = ["\(device.address)  \(advertisement?.name.map { Records.printable($0) } ?? "(no name)")"]
        for service in services {
            lines.append("  service \(service.uuid.shortString)\(Records.label(service.uuid))")
            for c in service.characteristics {
                lines.append("    characteristic \(c.uuid.shortString)\(Records.label(c.uuid))  [\(c.flags.joined(separator: ", "))]")
                for d in c.descriptors { lines.append("      descriptor \(d.uuid.shortString)\(Records.label(d.uuid))") }
            }
        }
        return lines
    }
}
