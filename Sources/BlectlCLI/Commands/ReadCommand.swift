import BlueZKit

/// `blectl read ADDR CHARACTERISTIC`: one characteristic's value (or one of its descriptors').
struct ReadCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "read",
        abstract: "Read a characteristic's value.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, reads the characteristic, or with --descriptor one of its descriptors, and prints the value in hex and, when it is clean UTF-8, as text; then disconnects, unless the device was already connected. A characteristic without the read flag is refused before anything is sent.",
        ]
    )

    @Argument(.device) var address: BluetoothAddress
    @OptionGroup var target: GATTTarget

    /// `--descriptor`: read this descriptor of the characteristic instead.
    @Option("descriptor", valueName: "uuid", help: "Read this descriptor of the characteristic instead, such as 2901.", parser: .uuid)
    var descriptor: BluetoothUUID?

    /// `--offset`: where the read starts, in bytes.
    @Option("offset", valueName: "bytes", help: "Start this many bytes into the value, 0 to 65535.",
            parser: .wholeNumber(in: 0...UInt16.max, unit: "bytes"))
    var offset: UInt16 = 0

    @Option(.connectionTimeout) var timeout: Duration = .seconds(20)

    var deviceAddress: BluetoothAddress? { address }

    func run(_ context: CommandContext) async throws {
        // Printed inside the connection: the Disconnect that follows never delays it.
        try await context.withConnectedDevice(address) { connected in
            let characteristic = try await target.resolve(on: connected, timeout: context.remaining)
            let value = if let descriptor {
                try await connected.read(try characteristic.requireDescriptor(descriptor, on: connected), offset: offset,
                                         timeout: context.remaining)
            } else {
                try await connected.read(characteristic, offset: offset, timeout: context.remaining)
            }
            switch context.printer.format {
            case .json:
                try await context.printer.result([Self.record(address, characteristic, descriptor: descriptor, value: value).serialized()])
            case .text:
                try await context.printer.result(Self.text(address, characteristic, descriptor: descriptor, value: value))
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
