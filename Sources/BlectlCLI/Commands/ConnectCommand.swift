import BlueZKit

/// `blectl connect ADDR`: connect, resolve services, print the GATT tree, disconnect what we connected.
enum ConnectCommand {
    static func run(_ options: DeviceOptions, _ context: CommandContext) async throws {
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
                try await printer.results([Records.gattTree(device, advertisement: device.current, origin: connected.origin, services: services).serialized()])
            case .text:
                try await printer.results(Records.gattTreeText(device, advertisement: device.current, services: services))
            }
        }
    }
}
