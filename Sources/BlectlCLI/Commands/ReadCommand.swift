import BlueZKit

/// `blectl read ADDR... CHARACTERISTIC`: one characteristic's value (or one of its descriptors').
struct ReadCommand: DeviceCommand {
    static let configuration = CommandConfiguration(
        name: "read",
        abstract: "Read a characteristic's value.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, reads the characteristic, or with --descriptor one of its descriptors, and prints the value in hex, as text when it is clean UTF-8, and decoded when the characteristic is one the GATT Specification Supplement defines or has a Presentation Format descriptor; then disconnects, unless the device was already connected. A characteristic without the read flag is refused before anything is sent.",
        ]
    )

    @Argument(.devices, replacedBy: "from") var addresses: [BluetoothAddress]
    @OptionGroup var target: GATTTarget

    /// `--descriptor`: read this descriptor of the characteristic instead.
    @Option("descriptor", valueName: "uuid", help: "Read this descriptor of the characteristic instead, such as 2901.", parser: .uuid)
    var descriptor: BluetoothUUID?

    /// `--offset`: where the read starts, in bytes.
    @Option("offset", valueName: "bytes", help: "Start this many bytes into the value, 0 to 65535.",
            parser: .wholeNumber(in: 0...UInt16.max, unit: "bytes"))
    var offset: UInt16 = 0

    @Option(.deviceTimeout) var timeout: Duration = .seconds(20)
    @Option(.retries) var retries: Int = 0
    @OptionGroup var fleet: FleetOptions

    func run(device address: BluetoothAddress, _ context: CommandContext,
             report: (DeviceResult) async throws -> Void) async throws {
        // Printed inside the connection: the Disconnect that follows never delays it.
        try await context.withConnectedDevice(address) { connected in
            let characteristic = try await target.resolve(on: connected, timeout: context.remaining)
            let value = if let descriptor {
                try await connected.read(try characteristic.requireDescriptor(descriptor, on: connected), offset: offset,
                                         timeout: context.remaining)
            } else {
                try await connected.read(characteristic, offset: offset, timeout: context.remaining)
            }
            // Decoded only when the whole value was read: a part read from --offset is not
            // what the format describes.
            let format = descriptor == nil && offset == 0
                ? try await connected.valueFormat(of: characteristic,
                                                  timeout: min(context.remaining, DecodedValueJSON.presentationFormatReadLimit))
                : nil
            try await report(DeviceResult(json: Self.record(address, characteristic, descriptor: descriptor, value: value, format: format),
                                          text: Self.text(address, characteristic, descriptor: descriptor, value: value, format: format)))
        }
    }

    // MARK: - Records

    /// The record of a value read; `format` decodes a characteristic's value (`decoded`,
    /// null without one or for a descriptor's value).
    static func record(_ address: BluetoothAddress, _ characteristic: GATTCharacteristic, descriptor: BluetoothUUID?,
                       value: [UInt8], format: CharacteristicFormat? = nil) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("service", .string(characteristic.service.shortString)),
            ("characteristic", .string(characteristic.uuid.shortString)),
            ("descriptor", .optional(descriptor?.shortString)),
        ] + Records.value(value) + [("decoded", decoded(descriptor: descriptor, value: value, format: format).jsonValue)])
    }

    static func text(_ address: BluetoothAddress, _ characteristic: GATTCharacteristic, descriptor: BluetoothUUID?,
                     value: [UInt8], format: CharacteristicFormat? = nil) -> [String] {
        Records.keyValueLines([
            ("address", address.description),
            ("service", Records.named(characteristic.service)),
            ("characteristic", Records.named(characteristic.uuid)),
            ("descriptor", descriptor.map { Records.named($0) } ?? "-"),
            ("value", Records.hexForPeople(value)),
            ("text", Records.textForPeople(value)),
            ("decoded", decoded(descriptor: descriptor, value: value, format: format).text),
        ])
    }

    /// The characteristic's value decoded by its format (``DecodedValueJSON``); none for a
    /// descriptor's value.
    static func decoded(descriptor: BluetoothUUID?, value: [UInt8], format: CharacteristicFormat?) -> DecodedValueJSON {
        DecodedValueJSON(descriptor == nil ? format?.decode(value) : nil)
    }
}
