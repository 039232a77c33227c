import BlueZKit
import DBusKit

/// `blectl notify ADDR CHAR`: JSON Lines, one per notified value, in order, until the
/// timeout (success), `--count` values (success), a lost link (4, or reconnected with
/// `--reconnect`) or a signal.
struct NotifyCommand: BlectlSubcommand {
    /// The delay before the first reconnection attempt after a link loss (`--reconnect`).
    static let reconnectInitialDelay = Duration.milliseconds(200)
    /// The longest delay between two reconnection attempts (`--reconnect`).
    static let reconnectMaximumDelay = Duration.seconds(2)

    static let configuration = CommandConfiguration(
        name: "notify",
        abstract: "Print the notifications of a characteristic.",
        discussion: [
            "Subscribes to the characteristic's notifications (or indications) and prints one JSON line per value as it arrives, in order, each with a sequence number from 1 and the time it was received. Ends with success at the timeout or after --count values. The timeout counts from the start: running out before the subscription is set up exits 124 naming the stage. Without --reconnect, a lost link ends the command with status 4 after the values received.",
            "Only what the device notifies is printed: the values come through the socket BlueZ hands over with AcquireNotify, never what another client reads. BlueZ allows one such client per characteristic: while another holds it, notify exits 5 (busy). Where AcquireNotify cannot be had (the characteristic only indicates, the bus cannot pass file descriptors, or another client has a StartNotify session on it), notify uses StartNotify and says why on standard error (event notify_method): values other clients read are then printed too. --start-notify asks for StartNotify, whose sessions other clients can share.",
        ]
    )

    @Argument(.device) var address: BluetoothAddress
    @OptionGroup var target: GATTTarget

    /// `--timeout`: how long to listen, connecting included, more than 0, up to 86400 s, or
    /// ``ListeningTimeout/infinite`` (`inf`).
    @Option(.timeout(help: "Stop after this many seconds, connecting included; decimals allowed, more than 0, inf for no limit.",
                     parser: .listeningSeconds(allowingZero: false)))
    var timeout: Duration = .seconds(10)

    /// `--count`: stop after this many values (1 or more); nil: no limit.
    @Option("count", valueName: "n", help: "Stop after this many values; if the timeout comes first, exit 124.", parser: .count)
    var count: Int?

    /// `--reconnect`: reconnect after a link loss and go on.
    @Flag("reconnect",
          help: "When the link drops, reconnect within the timeout and go on; losses and reconnections are reported on standard error.")
    var reconnect = false

    /// `--start-notify`: StartNotify instead of AcquireNotify.
    @Flag("start-notify",
          help: "Subscribe with StartNotify, which other clients can share, instead of AcquireNotify; values other clients read are printed too.")
    var startNotify = false

    /// `--mqtt` and its options: each value's record also published to a broker.
    @OptionGroup var mqtt: MQTTOptions

    var deviceAddress: BluetoothAddress? { address }

    func run(_ context: CommandContext) async throws {
        try await mqtt.withPublisher(printer: context.printer) { publisher in try await listen(context, publisher: publisher) }
    }

    private func listen(_ context: CommandContext, publisher: MQTTPublisher?) async throws {
        let command = self
        let deadline = context.deadline
        let printer = context.printer
        let device = try await Device.find(command.address, on: context.adapter, timeout: context.remaining)
        let policy = command.reconnect
            ? ReconnectPolicy(initialDelay: Self.reconnectInitialDelay, maximumDelay: Self.reconnectMaximumDelay, deadline: deadline)
            : nil
        let format = ValueFormat()
        try await device.withNotificationSubscription(
            timeout: context.remaining, reconnect: policy, method: command.startNotify ? .startNotify : .acquireNotify,
            disconnectTimeout: CommandContext.disconnectWait,
            characteristic: { connected in
                let characteristic = try await target.resolve(on: connected, timeout: max(.zero, deadline - .now))
                try await format.find(on: connected, characteristic,
                                      timeout: min(max(.zero, deadline - .now), DecodedValueJSON.presentationFormatReadLimit))
                return characteristic
            }
        ) { subscription in
            let listening = BLEOperation(.notifications, address: command.address, service: subscription.characteristic.service,
                                         characteristic: subscription.characteristic.uuid)
            // Reaching the timeout is success, unless --count values were wanted first.
            let timeoutReached: @Sendable () throws -> Void = {
                if command.count != nil { throw BLEError.timedOut(listening) }
            }
            let executor = device.session.eventExecutor
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        // Values are taken on the session's queue, right after the signal that
                        // carried them, with no thread hand-off per value.
                        try await withTaskExecutorPreference(executor) {
                            try await Self.print(subscription, command: command, printer: printer, format: format.found,
                                                 publisher: publisher)
                        }
                    } catch is BLEError where command.reconnect && ContinuousClock.now >= deadline {
                        // Still reconnecting when the time ran out (the subscription ends at
                        // the deadline too): that is the timeout, not a failure.
                        try timeoutReached()
                    }
                }
                group.addTask {
                    try await Task.sleep(until: deadline, clock: .continuous)
                    try timeoutReached()
                }
                // Between values, a reader that has gone ends the command too.
                group.addTask { try await Printer.waitUntilStdoutClosed() }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Prints every value of the subscription, numbered from 1, and reports link losses and
    /// reconnections on stderr; returns after `--count` values.
    ///
    /// The lines of the values that arrived together (one read from the bus) go to stdout in
    /// one write, made before the next wait, as a C client that drains its connection and then
    /// writes does: a line per write(2) cost more than the rest of a value's handling. No
    /// line waits for a later value: the batch is written as soon as no value is left to read,
    /// and at the end, whatever ends it.
    private static func print(_ subscription: NotificationSubscription, command: NotifyCommand, printer: Printer,
                              format: CharacteristicFormat?, publisher: MQTTPublisher?) async throws {
        let characteristic = subscription.characteristic
        var seq = 0
        let status = StatusLine.shared
        let listening = "receiving notifications of \(characteristic.uuid.shortString)"
        status.show(listening, detail: "0 so far")
        let layout = Self.layout(address: command.address, service: characteristic.service, characteristic: characteristic.uuid)
        var pending = JSONLines()
        func flush() async throws {
            guard !pending.bytes.isEmpty else { return }
            defer { pending.removeAll() }
            try await printer.results(utf8: pending.bytes)
        }
        if let fallback = subscription.fallback {
            await reportStartNotify(fallback, command: command, printer: printer)
        }
        var events = subscription.events.makeAsyncIterator()
        do {
            while true {
                if events.bufferedCount == 0 || pending.bytes.count >= Self.batchLimit { try await flush() }
                guard let event = try await events.next() else { break }
                switch event {
                case .value(let value):
                    seq += 1
                    status.show(listening, detail: "\(seq) so far")
                    let start = pending.bytes.count
                    switch printer.format {
                    case .json: layout.appendLine(Line(value: value, seq: seq, format: format), to: &pending)
                    case .text:
                        let row = text(value, seq: seq, format: format)
                        let rows = seq == 1 ? textHeader(address: command.address, characteristic: characteristic) + [row] : [row]
                        for row in rows {
                            pending.bytes += row.utf8
                            pending.bytes.append(UInt8(ascii: "\n"))
                        }
                    }
                    if let publisher {
                        publisher.publish(Line(value: value, seq: seq, format: format), layout: layout, appendedTo: printer.format == .json ? pending : nil,
                                          from: start, to: publisher.topics.value(command.address, characteristic: characteristic.uuid))
                    }
                    if let count = command.count, seq >= count {
                        try await flush()
                        return
                    }
                case .linkLost(let connection):
                    // Without --reconnect the stream ends with the disconnection, reported as the error.
                    guard command.reconnect else { continue }
                    try await flush()
                    await report("link_lost", [("connection", .int(connection))],
                                text: "link lost (connection \(connection)); reconnecting", command: command, printer: printer)
                case .reconnectFailed(let attempt, let error, let retryIn):
                    try await flush()
                    let milliseconds = Int(retryIn.components.seconds * 1000 + retryIn.components.attoseconds / 1_000_000_000_000_000)
                    await report("reconnect_failed", [("attempt", .int(attempt)), ("retry_in_ms", .int(milliseconds)),
                                                     ("message", .string(error.description))],
                                text: "reconnection attempt \(attempt) failed: \(error); next in \(milliseconds) ms",
                                command: command, printer: printer)
                case .fellBackToStartNotify(let reason):
                    try await flush()
                    await reportStartNotify(reason, command: command, printer: printer)
                case .restored(let connection):
                    try await flush()
                    status.show(listening, detail: "\(seq) so far")
                    await report("reconnected", [("connection", .int(connection))],
                                text: "reconnected (connection \(connection)); notifications restored", command: command, printer: printer)
                }
            }
        } catch {
            // The end's error comes only after every value sent before it, and those are written.
            try await flush()
            throw error
        }
        try await flush()
    }

    /// The characteristic's value format (``ConnectedDevice/valueFormat(of:timeout:)``), looked
    /// up on the first link only: a reconnection does not read the Presentation Format
    /// descriptor again.
    private final class ValueFormat: Sendable {
        private let state = Lock<(looked: Bool, format: CharacteristicFormat?)>((false, nil))

        var found: CharacteristicFormat? { state.withLock { $0.format } }

        func find(on connected: ConnectedDevice, _ characteristic: GATTCharacteristic, timeout: Duration) async throws {
            guard !state.withLock({ $0.looked }) else { return }
            let format = try await connected.valueFormat(of: characteristic, timeout: timeout)
            state.withLock { $0 = (true, format) }
        }
    }

    /// A batch of lines is written once it reaches this many bytes even while values are still
    /// waiting to be read: a pipe takes a write of at most `PIPE_BUF` (4,096) bytes whole.
    static let batchLimit = 3_072

    /// Reports a link loss or reconnection on stderr (``diagnostic(_:text:printer:)``), stamped
    /// with the time as the values are (RFC 3339, UTC, milliseconds): in JSON `event`,
    /// `address`, `time`, then `fields`; in text `blectl: TIME ADDRESS: text`.
    private static func report(_ name: String, _ fields: [(String, JSONValue)], text: String, command: NotifyCommand,
                              printer: Printer) async {
        let time = Records.rfc3339(sinceEpoch: Records.wallClockNow())
        let address = command.address.description
        await diagnostic(.object([("event", .string(name)), ("address", .string(address)), ("time", .string(time))] + fields),
                         text: "\(time) \(address): \(text)", printer: printer)
    }

    /// Reports that the notifications come through StartNotify, and why (event `notify_method`).
    private static func reportStartNotify(_ reason: AcquireNotifyFallback, command: NotifyCommand, printer: Printer) async {
        await report("notify_method", [("method", .string("StartNotify")), ("reason", .string(reason.description))],
                     text: "notifications through StartNotify (\(reason)): values other clients read are printed too",
                     command: command, printer: printer)
    }

    /// Writes a diagnostic from the cooperative pool: it is a blocking write to stderr, which
    /// must not hold up the session's queue (where ``print(_:command:printer:)`` runs) when
    /// stderr is a stalled pipe or terminal.
    private static func diagnostic(_ json: JSONValue, text: String, printer: Printer) async {
        await withTaskExecutorPreference(globalConcurrentExecutor) { printer.diagnostic(json, text: text) }
    }

    // MARK: - Records

    /// One value of the stream, its number in it (from 1), and the characteristic's format
    /// that decodes it (the same for every value; `nil`: none).
    struct Line: Sendable {
        var value: NotifiedValue
        var seq: Int
        var format: CharacteristicFormat? = nil
    }

    /// A value's record: the device, service and characteristic (the same for every value),
    /// then ``valueFields``.
    static func layout(address: BluetoothAddress, service: BluetoothUUID, characteristic: BluetoothUUID) -> RecordLayout<Line> {
        RecordLayout([
            RecordField("address", constant: address.description, text: address.description),
            RecordField("service", constant: service.shortString, text: Records.named(service)),
            RecordField("characteristic", constant: characteristic.shortString, text: Records.named(characteristic)),
        ] + valueFields)
    }

    /// The fields of each value: its bytes (hex, and text when clean UTF-8), the value decoded
    /// (``DecodedValueJSON``), its number, when it came and on which link.
    static let valueFields: [RecordField<Line>] = [
        RecordField("value", json: { HexBytes(bytes: $0.value.bytes) }, text: { Records.hexForPeople($0.value.bytes) }),
        RecordField("text", json: { Records.text(of: $0.value.bytes) }, text: { Records.textForPeople($0.value.bytes) }),
        RecordField("decoded", json: { DecodedValueJSON($0.format?.decode($0.value.bytes)) },
                    text: { DecodedValueJSON($0.format?.decode($0.value.bytes)).text }),
        RecordField("seq", json: { $0.seq }, text: { String($0.seq) }),
        RecordField("time", json: { RFC3339Time(sinceEpoch: $0.value.receivedAt) }, text: { Records.rfc3339(sinceEpoch: $0.value.receivedAt) }),
        RecordField("connection", json: { $0.value.connection }, text: { String($0.value.connection) }),
    ]

    static func record(_ value: NotifiedValue, seq: Int, address: BluetoothAddress, service: BluetoothUUID,
                       characteristic: BluetoothUUID) -> JSONValue {
        layout(address: address, service: service, characteristic: characteristic)
            .object(Line(value: value, seq: seq, format: CharacteristicFormat.format(for: characteristic)))
    }

    /// The text columns under ``textHeader(address:characteristic:)``, each padded to its
    /// width (values are printed as they come, so the widths are fixed; a longer value pushes
    /// the rest of its line to the right). The last column is not padded.
    static let textColumns = TextColumns(RecordLayout(valueFields), [
        ("TIME", .field("time"), 24), ("SEQ", .field("seq"), 5), ("CONNECTION", .field("connection"), 10),
        ("VALUE", .field("value"), 16), ("TEXT", .field("text"), 16),
        ("DECODED", .field("decoded"), 0),
    ])

    /// What the text format prints before the first value: the device, service and
    /// characteristic (the same for every value), then the column header.
    static func textHeader(address: BluetoothAddress, characteristic: GATTCharacteristic) -> [String] {
        ["address: \(address)  service: \(Records.named(characteristic.service))  characteristic: \(Records.named(characteristic.uuid))",
         Records.fixedWidthRow(textColumns.headers, widths: textColumns.widths)]
    }

    /// One value as a row: time, seq, connection, hex (`(empty)` for none), the text in
    /// quotes when the bytes are clean UTF-8, else `-`, and the value decoded by `format`
    /// (`-` for none).
    static func text(_ value: NotifiedValue, seq: Int, format: CharacteristicFormat? = nil) -> String {
        Records.fixedWidthRow(textColumns.cells(Line(value: value, seq: seq, format: format)), widths: textColumns.widths)
    }
}
