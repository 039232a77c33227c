import BlueZKit

/// `blectl request ADDR --write C --notify C VALUE`: a request written to one characteristic,
/// its responses taken from another's notifications (the vendor protocol, in general).
struct RequestCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "request",
        abstract: "Write a request and print the responses notified.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, subscribes to the notify characteristic, writes the request to the write characteristic, and prints the first --count notifications that start with --response-prefix, counting those that come before the write's reply; other notifications are ignored. Then stops the notifications and disconnects, unless the device was already connected. Characteristics whose flags allow no write or no notification are refused before anything is sent.",
        ]
    )

    @Argument(.device) var address: BluetoothAddress

    /// `<value>` as typed: hex, or text with `--text` (``request``).
    @Argument("value", help: "The request's bytes: hex (0102ff, 01:02:ff or 0x0102ff), or text with --text.", parser: .verbatim)
    var value: String

    @Option("write", valueName: "uuid", help: "The characteristic the request is written to.", parser: .uuid)
    var writeCharacteristic: BluetoothUUID

    @Option("notify", valueName: "uuid", help: "The characteristic whose notifications carry the responses.", parser: .uuid)
    var notifyCharacteristic: BluetoothUUID

    @Option("service", short: "s", valueName: "uuid",
            help: "The service both characteristics are in, when their UUIDs occur in several services.",
            parser: .uuid)
    var service: BluetoothUUID?

    @Flag(.text) var text = false

    /// `--response-prefix`; nil: every notification is a response.
    @Option("response-prefix", valueName: "hex",
            help: "Only notifications that start with these bytes are responses; without it, every notification is.",
            parser: .hexBytes)
    var prefix: [UInt8]?

    /// `--count`, 1 to 1000.
    @Option("count", valueName: "n", help: "Responses to wait for, 1 to 1000.", parser: .wholeNumber(in: 1...1000))
    var count = 1

    @Option(.connectionTimeout) var timeout: Duration = .seconds(20)
    @Option(.retries) var retries: Int = 0

    /// The bytes `<value>` stands for (``validate()`` reads them).
    private(set) var request: [UInt8] = []

    var deviceAddress: BluetoothAddress? { address }

    /// `--write` (with `--service`).
    var write: GATTTarget { GATTTarget(characteristic: writeCharacteristic, service: service) }
    /// `--notify` (with `--service`).
    var notify: GATTTarget { GATTTarget(characteristic: notifyCharacteristic, service: service) }

    /// `<value>` in the kind `--text` says.
    mutating func validate() throws(UsageError) {
        request = try ValueInput.bytes(value, text: text)
    }

    /// The same request: the same bytes (however they were spelled), to and from the same
    /// attributes, the same responses awaited within the same time.
    static func == (lhs: Self, rhs: Self) -> Bool {
        (lhs.address, lhs.write, lhs.notify, lhs.request, lhs.prefix ?? [], lhs.count) == (rhs.address, rhs.write, rhs.notify, rhs.request, rhs.prefix ?? [], rhs.count)
            && lhs.timeout == rhs.timeout
    }

    func run(_ context: CommandContext) async throws {
        // Printed inside the connection: StopNotify and the Disconnect that follow never delay it.
        try await context.withConnectedDevice(address) { connected in
            let writeCharacteristic = try await write.resolve(on: connected, timeout: context.remaining)
            let notifyCharacteristic = try await notify.resolve(on: connected, timeout: context.remaining)
            // The library path get-version and get-battery's vendor options take too.
            let responses = try await CommandChannel.request(request, on: connected, write: writeCharacteristic, notify: notifyCharacteristic,
                                                             responsePrefix: prefix ?? [], count: count, timeout: context.remaining)
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(address, request: request, responses: responses).serialized()])
            case .text: try await context.printer.result(Self.text(address, request: request, responses: responses))
            }
        }
    }

    // MARK: - Records

    static func record(_ address: BluetoothAddress, request: [UInt8], responses: [[UInt8]]) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("request", .string(request.hexString)),
            ("responses", .array(responses.map { .object(Records.value($0)) })),
        ])
    }

    static func text(_ address: BluetoothAddress, request: [UInt8], responses: [[UInt8]]) -> [String] {
        Records.keyValueLines([("address", address.description), ("request", request.hexString),
                               ("responses", String(responses.count))])
            + responses.enumerated().map { "  \($0.offset + 1): \(Records.hexForPeople($0.element))  \(Records.textForPeople($0.element))" }
    }
}
