import BlueZKit

/// `blectl write ADDR CHARACTERISTIC VALUE`: one write, with response or without; or
/// `blectl write ADDR CHARACTERISTIC --without-response --file PATH|-`: a stream (``WriteFile``).
struct WriteCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "write",
        abstract: "Write a value to a characteristic.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, writes the value with response (the device acknowledges it) or, with --without-response, without; then disconnects, unless the device was already connected. A characteristic whose flags do not allow that kind of write is refused before anything is sent (exit 3).",
            "With --without-response --file PATH (or - for standard input) instead of <value>, sends the bytes as write-without-response packets of the link's maximum size, MTU - 3 bytes (512 at most) each but the last: through the socket BlueZ hands over with AcquireWrite, waiting whenever it is full, or, when BlueZ refuses AcquireWrite, by WriteValue with type command. Prints address, service, characteristic, bytes, packets, mtu, acquired and seconds once BlueZ has taken every packet. --timeout then bounds finding, connecting and acquiring, and then each wait for the link to take the next packet; reading the input has no limit.",
        ]
    )

    @Argument(.device) var address: BluetoothAddress
    @OptionGroup var target: GATTTarget

    /// `<value>` as typed: hex, or text with `--text` (``bytes``).
    @Argument("value", help: "The bytes to write: hex (0102ff, 01:02:ff or 0x0102ff), or text with --text. Not with --file.",
              parser: .verbatim)
    var value: String?

    @Flag(.text) var text = false

    /// Write Command (`--without-response`) instead of Write Request.
    @Flag("without-response",
          help: "Write without response (ATT Write Command) instead of with response; the characteristic must allow it. Required with --file.")
    var withoutResponse = false

    /// `--file`: the bytes to stream.
    @Option("file", valueName: "path",
            help: "Stream this file (- for standard input) as write-without-response packets of the link's maximum size (MTU - 3 bytes, 512 at most), through AcquireWrite when BlueZ grants it, else WriteValue. Needs --without-response; takes the place of <value>.",
            parser: .inputSource)
    var file: InputSource?

    @Option(.connectionTimeout) var timeout: Duration = .seconds(20)
    @Option(.retries) var retries: Int = 0

    /// The bytes `<value>` stands for (``validate()`` reads them); empty with `--file`.
    private(set) var bytes: [UInt8] = []

    var deviceAddress: BluetoothAddress? { address }

    /// Where the bytes written come from.
    enum Source: Sendable, Equatable {
        /// `<value>` on the command line: one WriteValue.
        case value([UInt8])
        /// `--file PATH|-`: a stream of write-without-response packets, through AcquireWrite
        /// and the fd BlueZ passes when it grants it (``WriteFile``, its own record).
        case file(WriteFile)
    }

    var source: Source {
        file.map { .file(WriteFile(target: target, source: $0, timeout: timeout)) } ?? .value(bytes)
    }

    /// Write Request (`request`, the default) or Write Command (`--without-response`).
    var type: ConnectedDevice.WriteType { withoutResponse ? .command : .request }

    /// `--file` and `<value>`: one or the other (``WriteFile/checkUsage(file:hasValue:withoutResponse:text:subcommand:)``);
    /// `<value>` in the kind `--text` says.
    mutating func validate() throws(UsageError) {
        try WriteFile.checkUsage(file: file, hasValue: value != nil, withoutResponse: withoutResponse, text: text)
        if let value { bytes = try ValueInput.bytes(value, text: text) }
    }

    /// The same write: to the same attribute, the same bytes (however they were spelled) the
    /// same way, within the same time.
    static func == (lhs: Self, rhs: Self) -> Bool {
        (lhs.address, lhs.target, lhs.source, lhs.type, lhs.timeout) == (rhs.address, rhs.target, rhs.source, rhs.type, rhs.timeout)
    }

    func run(_ context: CommandContext) async throws {
        if case .file(let stream) = source {
            try await stream.run(address: address, context: context)
            return
        }
        // Printed inside the connection: the Disconnect that follows never delays it.
        try await context.withConnectedDevice(address) { connected in
            let characteristic = try await target.resolve(on: connected, timeout: context.remaining)
            switch source {
            case .value(let bytes):
                // ConnectedDevice.write refuses a type the flags do not allow before sending.
                try await connected.write(characteristic, bytes, type: type, timeout: context.remaining)
                switch context.printer.format {
                case .json:
                    try await context.printer.result([Self.record(address, characteristic, length: bytes.count, type: type).serialized()])
                case .text:
                    try await context.printer.result(Self.text(address, characteristic, length: bytes.count, type: type))
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
