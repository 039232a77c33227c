import BlueZKit

/// `blectl get-battery ADDR...`: Battery1, else GATT 0x2A19, else Battery1 appearing; or the vendor protocol.
struct GetBatteryCommand: DeviceProbe {
    static let configuration = CommandConfiguration(
        name: "get-battery",
        aliases: ["battery"],
        abstract: "Read a device's battery level.",
        discussion: [
            "Takes org.bluez.Battery1's Percentage if BlueZ has it, else reads the Battery Level (0x2A19) of the Battery Service (0x180F), else waits briefly for Battery1 to appear; a percentage from 0 to 100. With --vendor-service, --vendor-write and --vendor-notify, writes 0x02 and takes the answer 0x82 percent from notifications instead.",
        ]
    )

    @Argument(.devices, replacedBy: "from") var addresses: [BluetoothAddress]
    @Option(.deviceTimeout) var timeout: Duration = .seconds(20)
    @Option(.retries) var retries: Int = 0
    @OptionGroup var vendor: VendorOptions?
    @OptionGroup var fleet: FleetOptions

    static func read(_ device: ConnectedDevice, vendor: VendorProtocol?, timeout: Duration) async throws -> BatteryReading {
        if let vendor { try await vendor.batteryLevel(of: device, timeout: timeout) } else { try await device.batteryLevel(timeout: timeout) }
    }

    // MARK: - Records

    static func record(_ reading: BatteryReading, address: BluetoothAddress) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("percentage", .int(reading.percentage)),
            ("source", .string(reading.source.rawValue)),
        ])
    }

    static func text(_ reading: BatteryReading, address: BluetoothAddress) -> [String] {
        ["\(address)  \(reading.percentage)%  (\(reading.source.rawValue))"]
    }
}
