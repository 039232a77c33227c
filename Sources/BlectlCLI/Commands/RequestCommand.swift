import BlueZKit

/// `blectl request ADDR --write C --notify C VALUE`: a request written to one characteristic,
/// its responses taken from another's notifications (the vendor protocol, in general).
struct RequestCommand: BlectlSubcommand {
    static let writeOption = Option<BluetoothUUID>(
        "write", valueName: "uuid",
        help: "The characteristic the request is written to.",
        parser: .uuid, required: true
    )
    static let notifyOption = Option<BluetoothUUID>(
        "notify", valueName: "uuid",
        help: "The characteristic whose notifications carry the responses.",
        parser: .uuid, required: true
    )
    static let serviceOption = Option<BluetoothUUID>(
        "service", short: "s", valueName: "uuid",
        help: "The service both characteristics are in, when their UUIDs occur in several services.",
        parser: .uuid
    )
    static let valueArgument = ValueInput.argument(
        help: "The request's bytes: hex (0102ff, 01:02:ff or 0x0102ff), or text with --text."
    )
    static let responsePrefix = Option<[UInt8]>(
        "response-prefix", valueName: "hex",
        help: "Only notifications that start with these bytes are responses; without it, every notification is.",
        parser: .hexBytes
    )
    static let countOption = Option<Int>(
        "count", valueName: "n",
        help: "Responses to wait for, 1 to 1000.",
        parser: .wholeNumber(in: 1...1000), default: 1
    )

    static let commandName = "request"
    static let command = CommandSpec(
        name: commandName,
        abstract: "Write a request and print the responses notified.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, subscribes to the notify characteristic, writes the request to the write characteristic, and prints the first --count notifications that start with --response-prefix, counting those that come before the write's reply; other notifications are ignored. Then stops the notifications and disconnects, unless the device was already connected. Characteristics whose flags allow no write or no notification are refused before anything is sent.",
        ],
        arguments: [DeviceOptions.addressArgument.spec, valueArgument.spec],
        options: [writeOption.spec, notifyOption.spec, serviceOption.spec, ValueInput.textFlag.spec,
                  responsePrefix.spec, countOption.spec, DeviceOptions.timeoutOption.spec]
    )

    var options: DeviceOptions
    /// `--write` (with `--service`).
    var write: GATTTarget
    /// `--notify` (with `--service`).
    var notify: GATTTarget
    var request: [UInt8]
    /// `--response-prefix`; empty: every notification.
    var prefix: [UInt8]
    /// `--count`, 1 to 1000.
    var count: Int
    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(options: DeviceOptions, write: GATTTarget, notify: GATTTarget, request: [UInt8], prefix: [UInt8] = [], count: Int = 1) {
        self.options = options
        self.write = write
        self.notify = notify
        self.request = request
        self.prefix = prefix
        self.count = count
    }

    init(from values: ParsedValues) throws(UsageError) {
        options = try DeviceOptions(from: values)
        let service = try values.value(of: Self.serviceOption)
        write = GATTTarget(characteristic: try values.requiredValue(of: Self.writeOption), service: service)
        notify = GATTTarget(characteristic: try values.requiredValue(of: Self.notifyOption), service: service)
        request = try ValueInput.bytes(of: Self.valueArgument, from: values)
        prefix = try values.value(of: Self.responsePrefix) ?? []
        count = try values.requiredValue(of: Self.countOption)
    }

    func run(_ context: CommandContext) async throws {
        // Printed inside the connection: StopNotify and the Disconnect that follow never delay it.
        try await context.withConnectedDevice(options.address) { connected in
            let writeCharacteristic = try await write.resolve(on: connected, timeout: context.remaining)
            let notifyCharacteristic = try await notify.resolve(on: connected, timeout: context.remaining)
            // The library path get-version and get-battery's vendor options take too.
            let responses = try await CommandChannel.request(request, on: connected, write: writeCharacteristic, notify: notifyCharacteristic,
                                                             responsePrefix: prefix, count: count, timeout: context.remaining)
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(options.address, request: request, responses: responses).serialized()])
            case .text: try await context.printer.result(Self.text(options.address, request: request, responses: responses))
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
