import BlueZKit

/// `blectl get-battery ADDR`: Battery1, else GATT 0x2A19, else Battery1 appearing; or the vendor protocol.
enum GetBatteryCommand {
    static func run(_ options: DeviceOptions, _ vendor: VendorProtocolOptions?, _ context: CommandContext) async throws {
        // The result is printed as soon as it is known, inside the connection: the
        // Disconnect that follows (BlueZ answers it after its 2 s timer) never delays it.
        try await context.withConnectedDevice(options.address) { connected in
            let reading = if let vendor {
                try await vendor.batteryLevel(of: connected, timeout: context.remaining)
            } else {
                try await connected.batteryLevel(timeout: context.remaining)
            }
            switch context.printer.format {
            case .json: try await context.printer.results([Records.battery(reading, address: options.address).serialized()])
            case .text: try await context.printer.results([Records.batteryText(reading, address: options.address)])
            }
        }
    }
}
