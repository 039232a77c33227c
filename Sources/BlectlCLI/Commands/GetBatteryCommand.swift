import BlueZKit

/// `blectl get-battery ADDR`: Battery1, else GATT 0x2A19, else Battery1 appearing; or the vendor protocol.
struct GetBatteryCommand: BlectlSubcommand {
    static let command = CommandSpec(
        name: "get-battery", aliases: ["battery"],
        abstract: "Read a device's battery level.",
        discussion: [
            "Takes org.bluez.Battery1's Percentage if BlueZ has it, else reads the Battery Level (0x2A19) of the Battery Service (0x180F), else waits briefly for Battery1 to appear; a percentage from 0 to 100. With --vendor-service, --vendor-write and --vendor-notify, writes 0x02 and takes the answer 0x82 percent from notifications instead.",
        ],
        arguments: [DeviceOptions.addressArgument.spec],
        options: [DeviceOptions.timeoutOption.spec] + VendorOptions.specs,
        allOrNoneGroups: [VendorOptions.specs.map(\.long)]
    )

    var options: DeviceOptions
    var vendor: VendorProtocolOptions?
    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(options: DeviceOptions, vendor: VendorProtocolOptions? = nil) {
        self.options = options
        self.vendor = vendor
    }

    init(from values: ParsedValues) throws(UsageError) {
        options = try DeviceOptions(from: values)
        vendor = try VendorOptions.options(from: values)
    }

    func run(_ context: CommandContext) async throws {
        // The result is printed as soon as it is known, inside the connection: the
        // Disconnect that follows (BlueZ answers it after its 2 s timer) never delays it.
        try await context.withConnectedDevice(options.address) { connected in
            let reading = if let vendor {
                try await vendor.batteryLevel(of: connected, timeout: context.remaining)
            } else {
                try await connected.batteryLevel(timeout: context.remaining)
            }
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(reading, address: options.address).serialized()])
            case .text: try await context.printer.result([Self.text(reading, address: options.address)])
            }
        }
    }

    // MARK: - Records

    static func record(_ reading: BatteryReading, address: BluetoothAddress) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("percentage", .int(reading.percentage)),
            ("source", .string(reading.source.rawValue)),
        ])
    }

    static func text(_ reading: BatteryReading, address: BluetoothAddress) -> String {
        "\(address)  \(reading.percentage)%  (\(reading.source.rawValue))"
    }
}
