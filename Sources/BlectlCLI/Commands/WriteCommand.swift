import BlueZKit

/// `blectl write ADDR CHARACTERISTIC VALUE`: one write, with response or without.
struct WriteCommand: BlectlSubcommand {
    static let valueArgument = ValueInput.argument(
        help: "The bytes to write: hex (0102ff, 01:02:ff or 0x0102ff), or text with --text."
    )
    static let withoutResponse = Flag(
        "without-response",
        help: "Write without response (ATT Write Command) instead of with response; the characteristic must allow it."
    )

    static let command = CommandSpec(
        name: "write",
        abstract: "Write a value to a characteristic.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, writes the value with response (the device acknowledges it) or, with --without-response, without; then disconnects, unless the device was already connected. A characteristic whose flags do not allow that kind of write is refused before anything is sent (exit 3).",
        ],
        arguments: [DeviceOptions.addressArgument.spec, GATTTarget.characteristicArgument.spec, valueArgument.spec],
        options: [GATTTarget.serviceOption.spec, ValueInput.textFlag.spec, withoutResponse.spec, DeviceOptions.timeoutOption.spec]
    )

    /// Where the bytes written come from.
    enum Source: Sendable, Equatable {
        /// `<value>` on the command line: one WriteValue.
        case value([UInt8])
        // `--file PATH` (streaming through AcquireWrite and the fd BlueZ passes, in MTU-sized
        // writes) is to be a second case here, with its own branch in `run` and its own record.
    }

    var options: DeviceOptions
    var target: GATTTarget
    var source: Source
    /// Write Request (`request`, the default) or Write Command (`--without-response`).
    var type: ConnectedDevice.WriteType
    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(options: DeviceOptions, target: GATTTarget, source: Source, type: ConnectedDevice.WriteType = .request) {
        self.options = options
        self.target = target
        self.source = source
        self.type = type
    }

    init(from values: ParsedValues) throws(UsageError) {
        options = try DeviceOptions(from: values)
        target = try GATTTarget(from: values)
        source = .value(try ValueInput.bytes(of: Self.valueArgument, from: values))
        type = values.isSet(Self.withoutResponse) ? .command : .request
    }

    func run(_ context: CommandContext) async throws {
        // Printed inside the connection: the Disconnect that follows never delays it.
        try await context.withConnectedDevice(options.address) { connected in
            let characteristic = try await target.resolve(on: connected, timeout: context.remaining)
            switch source {
            case .value(let bytes):
                // ConnectedDevice.write refuses a type the flags do not allow before sending.
                try await connected.write(characteristic, bytes, type: type, timeout: context.remaining)
                switch context.printer.format {
                case .json:
                    try await context.printer.results([Self.record(options.address, characteristic, length: bytes.count, type: type).serialized()])
                case .text:
                    try await context.printer.results(Self.text(options.address, characteristic, length: bytes.count, type: type))
                }
            }
        }
    }

    // MARK: - Records

    static func record(_ address: BluetoothAddress, _ characteristic: GATTCharacteristic, length: Int,
                       type: ConnectedDevice.WriteType) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("service", .string(characteristic.service.shortString)),
            ("characteristic", .string(characteristic.uuid.shortString)),
            ("length", .int(length)),
            ("type", .string(type.rawValue)),
        ])
    }

    static func text(_ address: BluetoothAddress, _ characteristic: GATTCharacteristic, length: Int,
                     type: ConnectedDevice.WriteType) -> [String] {
        [
            "address: \(address)",
            "service: \(Records.named(characteristic.service))",
            "characteristic: \(Records.named(characteristic.uuid))",
            "length: \(length)",
            "type: \(type.rawValue)",
        ]
    }
}
