import BlueZKit

/// `blectl get-version ADDR`: Device Information Service 0x180A, or the vendor protocol.
enum GetVersionCommand {
    static func run(_ options: DeviceOptions, _ vendor: VendorProtocolOptions?, _ context: CommandContext) async throws {
        // The result is printed as soon as it is known, inside the connection: the
        // Disconnect that follows (BlueZ answers it after its 2 s timer) never delays it.
        try await context.withConnectedDevice(options.address) { connected in
            let info = if let vendor {
                try await vendor.version(of: connected, timeout: context.remaining)
            } else {
                try await connected.deviceInformation(timeout: context.remaining)
            }
            switch context.printer.format {
            case .json: try await context.printer.results([Records.version(info, address: options.address).serialized()])
            case .text: try await context.printer.results(Records.versionText(info, address: options.address))
            }
        }
    }
}
