import BlueZKit

/// `blectl read ADDR CHARACTERISTIC`: one characteristic's value (or one of its descriptors').
struct ReadCommand: BlectlSubcommand {
    static let descriptorOption = Option<BluetoothUUID>(
        "descriptor", valueName: "uuid",
        help: "Read this descriptor of the characteristic instead, such as 2901.",
        parser: .uuid
    )
    static let offsetOption = Option<UInt16>(
        "offset", valueName: "bytes",
        help: "Start this many bytes into the value, 0 to 65535.",
        parser: .wholeNumber(in: 0...UInt16.max, unit: "bytes"), default: 0
    )

    static let commandName = "read"
    static let command = CommandSpec(
        name: commandName,
        abstract: "Read a characteristic's value.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, reads the characteristic, or with --descriptor one of its descriptors, and prints the value in hex and, when it is clean UTF-8, as text; then disconnects, unless the device was already connected. A characteristic without the read flag is refused before anything is sent.",
        ],
        arguments: [DeviceOptions.addressArgument.spec, GATTTarget.characteristicArgument.spec],
        options: [GATTTarget.serviceOption.spec, descriptorOption.spec, offsetOption.spec, DeviceOptions.timeoutOption.spec]
    )

    var options: DeviceOptions
    var target: GATTTarget
    /// `--descriptor`: read this descriptor of the characteristic instead.
    var descriptor: BluetoothUUID?
    /// `--offset`: where the read starts, in bytes.
    var offset: UInt16
    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(options: DeviceOptions, target: GATTTarget, descriptor: BluetoothUUID? = nil, offset: UInt16 = 0) {
        self.options = options
        self.target = target
        self.descriptor = descriptor
        self.offset = offset
    }

    init(from values: ParsedValues) throws(UsageError) {
        options = try DeviceOptions(from: values)
        target = try GATTTarget(from: values)
        descriptor = try values.value(of: Self.descriptorOption)
        offset = try values.requiredValue(of: Self.offsetOption)
    }

    func run(_ context: CommandContext) async throws {
        // Printed inside the connection: the Disconnect that follows never delays it.
        try await context.withConnectedDevice(options.address) { connected in
            let characteristic = try await target.resolve(on: connected, timeout: context.remaining)
            let value = if let descriptor {
                try await connected.read(try characteristic.requireDescriptor(descriptor, on: connected), offset: offset,
                                         timeout: context.remaining)
            } else {
                try await connected.read(characteristic, offset: offset, timeout: context.remaining)
            }
            switch context.printer.format {
            case .json:
                try await context.printer.result([Self.record(options.address, characteristic, descriptor: descriptor, value: value).serialized()])
            case .text:
                try await context.printer.result(Self.text(options.address, characteristic, descriptor: descriptor, value: value))
            }
        }
    }

    // MARK: - Records

    static func record(_ address: BluetoothAddress, _ characteristic: GATTCharacteristic, descriptor: BluetoothUUID?,
                       value: [UInt8]) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("service", .string(characteristic.service.shortString)),
            ("characteristic", .string(characteristic.uuid.shortString)),
            ("descriptor", .optional(descriptor?.shortString)),
        ] + Records.value(value))
    }

    static func text(_ address: BluetoothAddress, _ characteristic: GATTCharacteristic, descriptor: BluetoothUUID?,
                     value: [UInt8]) -> [String] {
        Records.keyValueLines([
            ("address", address.description),
            ("service", Records.named(characteristic.service)),
            ("characteristic", Records.named(characteristic.uuid)),
            ("descriptor", descriptor.map { Records.named($0) } ?? "-"),
            ("value", Records.hexForPeople(value)),
            ("text", Records.textForPeople(value)),
        ])
    }
}
