import BlueZKit

/// `blectl get-version ADDR`: Device Information Service 0x180A, or the vendor protocol.
enum GetVersionCommand {
    static func run(_ options: DeviceOptions, _ vendor: VendorProtocolOptions?, _ context: CommandContext) async throws {
        let info = try await context.withConnectedDevice(options.address) { connected in
            if let vendor {
                return try await vendor.version(of: connected, timeout: context.remaining)
            }
            return try await connected.deviceInformation(timeout: context.remaining)
        }
        switch context.printer.format {
        case .json: try await context.printer.results([Records.version(info, address: options.address).serialized()])
        case .text: try await context.printer.results(Records.versionText(info, address: options.address))
        }
    }
}
