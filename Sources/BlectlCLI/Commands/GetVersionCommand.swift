import BlueZKit

/// `blectl get-version ADDR`: Device Information Service 0x180A, or the vendor protocol.
struct GetVersionCommand: BlectlSubcommand {
    static let command = CommandSpec(
        name: "get-version", aliases: ["version"],
        abstract: "Read a device's firmware version.",
        discussion: [
            "Reads the Device Information service (0x180A): firmware (0x2A26), hardware (0x2A27) and software (0x2A28) revisions, manufacturer (0x2A29) and model (0x2A24); absent ones are null. With --vendor-service, --vendor-write and --vendor-notify, writes 0x01 and takes the answer 0x81 major minor patch from notifications instead.",
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
            let info = if let vendor {
                try await vendor.version(of: connected, timeout: context.remaining)
            } else {
                try await connected.deviceInformation(timeout: context.remaining)
            }
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(info, address: options.address).serialized()])
            case .text: try await context.printer.result(Self.text(info, address: options.address))
            }
        }
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
        [("address", address.description), ("source", info.source.rawValue),
         ("firmware_revision", info.firmwareRevision), ("hardware_revision", info.hardwareRevision),
         ("software_revision", info.softwareRevision), ("manufacturer_name", info.manufacturerName),
         ("model_number", info.modelNumber)].map { "\($0.0): \($0.1.map { Records.printable($0) } ?? "-")" }
    }
}
