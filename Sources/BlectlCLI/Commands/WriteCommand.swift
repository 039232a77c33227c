import BlueZKit

/// `blectl write ADDR CHARACTERISTIC VALUE`: one write, with response or without; or
/// `blectl write ADDR CHARACTERISTIC --without-response --file PATH|-`: a stream (``WriteFile``).
struct WriteCommand: BlectlSubcommand {
    static let valueArgument = ValueInput.argument(
        help: "The bytes to write: hex (0102ff, 01:02:ff or 0x0102ff), or text with --text. Not with --file.",
        optional: true
    )
    static let withoutResponse = Flag(
        "without-response",
        help: "Write without response (ATT Write Command) instead of with response; the characteristic must allow it. Required with --file."
    )

    static let commandName = "write"
    static let command = CommandSpec(
        name: commandName,
        abstract: "Write a value to a characteristic.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, writes the value with response (the device acknowledges it) or, with --without-response, without; then disconnects, unless the device was already connected. A characteristic whose flags do not allow that kind of write is refused before anything is sent (exit 3).",
            "With --without-response --file PATH (or - for standard input) instead of <value>, sends the bytes as write-without-response packets of the link's maximum size, MTU - 3 bytes (512 at most) each but the last: through the socket BlueZ hands over with AcquireWrite, waiting whenever it is full, or, when BlueZ refuses AcquireWrite, by WriteValue with type command. Prints address, service, characteristic, bytes, packets, mtu, acquired and seconds once BlueZ has taken every packet. --timeout then bounds finding, connecting and acquiring, and then each wait for the link to take the next packet; reading the input has no limit.",
        ],
        arguments: [DeviceOptions.addressArgument.spec, GATTTarget.characteristicArgument.spec, valueArgument.spec],
        options: [GATTTarget.serviceOption.spec, ValueInput.textFlag.spec, withoutResponse.spec, WriteFile.fileOption.spec, DeviceOptions.timeoutOption.spec]
    )

    /// Where the bytes written come from.
    enum Source: Sendable, Equatable {
        /// `<value>` on the command line: one WriteValue.
        case value([UInt8])
        /// `--file PATH|-`: a stream of write-without-response packets, through AcquireWrite
        /// and the fd BlueZ passes when it grants it (``WriteFile``, its own record).
        case file(WriteFile)
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
        let file = try values.value(of: WriteFile.fileOption)
        let withoutResponse = values.isSet(Self.withoutResponse)
        try WriteFile.checkUsage(file: file, hasValue: try values.value(of: Self.valueArgument) != nil,
                                 withoutResponse: withoutResponse, text: values.isSet(ValueInput.textFlag),
                                 subcommand: Self.commandName)
        if let file {
            source = .file(WriteFile(target: target, source: file, timeout: options.timeout))
        } else {
            source = .value(try ValueInput.bytes(of: Self.valueArgument, from: values))
        }
        type = withoutResponse ? .command : .request
    }

    func run(_ context: CommandContext) async throws {
        if case .file(let stream) = source {
            try await stream.run(address: options.address, context: context)
            return
        }
        // Printed inside the connection: the Disconnect that follows never delays it.
        try await context.withConnectedDevice(options.address) { connected in
            let characteristic = try await target.resolve(on: connected, timeout: context.remaining)
            switch source {
            case .value(let bytes):
                // ConnectedDevice.write refuses a type the flags do not allow before sending.
                try await connected.write(characteristic, bytes, type: type, timeout: context.remaining)
                switch context.printer.format {
                case .json:
                    try await context.printer.result([Self.record(options.address, characteristic, length: bytes.count, type: type).serialized()])
                case .text:
                    try await context.printer.result(Self.text(options.address, characteristic, length: bytes.count, type: type))
                }
            case .file:
                preconditionFailure("a stream runs before the connection (WriteFile.run)")
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
        Records.keyValueLines([
            ("address", address.description),
            ("service", Records.named(characteristic.service)),
            ("characteristic", Records.named(characteristic.uuid)),
            ("length", String(length)),
            ("type", type.rawValue),
        ])
    }
}
