import BlueZKit

/// `blectl get-version ADDR...`: Device Information Service 0x180A, or the vendor protocol.
struct GetVersionCommand: DeviceProbe {
    static let configuration = CommandConfiguration(
        name: "get-version",
        aliases: ["version"],
        abstract: "Read a device's firmware version.",
        discussion: [
            "Reads the Device Information service (0x180A): firmware (0x2A26), hardware (0x2A27) and software (0x2A28) revisions, manufacturer (0x2A29) and model (0x2A24); absent ones are null. With --vendor-service, --vendor-write and --vendor-notify, writes 0x01 and takes the answer 0x81 major minor patch from notifications instead.",
        ]
    )

    @Argument(.devices, replacedBy: "from") var addresses: [BluetoothAddress]
    @Option(.deviceTimeout) var timeout: Duration = .seconds(20)
    @Option(.retries) var retries: Int = 0
    @OptionGroup var vendor: VendorOptions?
    @OptionGroup var fleet: FleetOptions

    static func read(_ device: ConnectedDevice, vendor: VendorProtocol?, timeout: Duration) async throws -> DeviceInformation {
        if let vendor { try await vendor.version(of: device, timeout: timeout) } else { try await device.deviceInformation(timeout: timeout) }
    }

    // MARK: - Records

    static func record(_ info: DeviceInformation, address: BluetoothAddress) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("source", .string(info.source.rawValue)),
            ("firmware_revision", .optional(info.firmwareRevision)),
            ("hardware_revision", .optional(info.hardwareRevision)),
            ("software_revision", .optional(info.softwareRevision)),
            ("manufacturer_name", .optional(info.manufacturerName)),
            ("model_number", .optional(info.modelNumber)),
        ])
    }

    static func text(_ info: DeviceInformation, address: BluetoothAddress) -> [String] {
        Records.keyValueLines([("address", address.description), ("source", info.source.rawValue),
         ("firmware_revision", info.firmwareRevision), ("hardware_revision", info.hardwareRevision),
         ("software_revision", info.softwareRevision), ("manufacturer_name", info.manufacturerName),
         ("model_number", info.modelNumber)].map { ($0.0, $0.1.map { Records.printable($0) } ?? "-") })
    }
}
