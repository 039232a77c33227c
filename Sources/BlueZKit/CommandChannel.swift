import DBusKit
import Synchronization

/// Request/response over two characteristics: a command written to one, the answers taken from
/// notifications on another, matched by a prefix of their bytes (a response code, a sequence
/// number; empty: any notification).
///
/// Notifications are subscribed (StartNotify) before anything is written, and a request
/// registers its matcher before its write, so an answer that arrives before the WriteValue
/// reply is still matched. Each notification goes to the first request, in the order the
/// requests were made, whose prefix it starts with; notifications no request waits for are
/// ignored. Several requests may be in flight.
public final class CommandChannel: Sendable {
    public let device: ConnectedDevice
    public let writeCharacteristic: GATTCharacteristic
    public let notifyCharacteristic: GATTCharacteristic

    private struct Matcher {
        var id: UInt64
        var prefix: [UInt8]
        var count: Int
        var answers: [[UInt8]] = []
        var shot: OneShot<[[UInt8]]>
    }
    private struct Matchers {
        /// In the order the requests were made.
        var waiting: [Matcher] = []
        var nextID: UInt64 = 0
    }
    private let matchers = Lock(Matchers())

    private init(device: ConnectedDevice, write: GATTCharacteristic, notify: GATTCharacteristic) {
        self.device = device
        self.writeCharacteristic = write
        self.notifyCharacteristic = notify
    }

    /// Opens a channel (StartNotify on `notify`), runs `body`, closes it (StopNotify).
    /// - Throws: ``BLEError/notSupported(_:_:)`` when `write` has neither the `write` nor the
    ///   `write-without-response` flag, or `notify` neither `notify` nor `indicate` (nothing is
    ///   sent then); the errors of ``ConnectedDevice/withNotifications(_:setupTimeout:onValue:_:)``.
    public static func with<T: Sendable>(
        _ device: ConnectedDevice, write: GATTCharacteristic, notify: GATTCharacteristic, setupTimeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (CommandChannel) async throws -> T
    ) async throws -> T {
        // bluetoothd passes on a write to a characteristic whatever its Flags say, and a
        // device may take it (seen on the real rig: a vendor "command" overwrote the Battery
        // Level); refuse before touching the device.
        try device.require(write, oneOf: ["write", "write-without-response"], for: .write, "be written")
        try device.require(notify, oneOf: ["notify", "indicate"], for: .notificationSetup, "notify")
        let channel = CommandChannel(device: device, write: write, notify: notify)
        return try await device.withNotifications(notify, setupTimeout: setupTimeout, onValue: { channel.deliver($0) }) {
            try await body(channel)
        }
    }

    /// One request on a channel of its own: opens it (StartNotify on `notify`), writes
    /// `command`, collects `count` answers that start with `responsePrefix`, closes it
    /// (StopNotify). What blectl's `request` and the vendor protocol's probes run.
    /// - Parameters:
    ///   - command: the bytes written to `write` (Write Request when it has the `write` flag,
    ///     else Write Command).
    ///   - responsePrefix: the bytes an answer starts with; empty (the default) takes every
    ///     notification.
    ///   - count: how many answers to collect (at least 1).
    ///   - timeout: the limit for StartNotify, the write and the answers together.
    /// - Returns: the answers, whole, in the order they were notified.
    /// - Throws: as ``with(_:write:notify:setupTimeout:_:)`` and ``request(_:responsePrefix:count:timeout:)``.
    public static func request(
        _ command: [UInt8], on device: ConnectedDevice, write: GATTCharacteristic, notify: GATTCharacteristic,
        responsePrefix: [UInt8] = [], count: Int = 1, timeout: Duration
    ) async throws -> [[UInt8]] {
        let deadline = ContinuousClock.now + timeout
        return try await with(device, write: write, notify: notify, setupTimeout: timeout) { channel in
            try await channel.request(command, responsePrefix: responsePrefix, count: count, timeout: deadline - .now)
        }
    }

    /// Requests waiting for an answer (for tests: nothing may be left after a request).
    package var waitingCount: Int { matchers.withLock { $0.waiting.count } }

    /// Gives `value` (one notification, as its signal carried it) to the first request whose
    /// prefix it starts with.
    private func deliver(_ value: [UInt8]) {
        let done: (OneShot<[[UInt8]]>, [[UInt8]])? = matchers.withLock { state in
            guard let index = state.waiting.firstIndex(where: { value.starts(with: $0.prefix) }) else { return nil }
            state.waiting[index].answers.append(value)
            guard state.waiting[index].answers.count >= state.waiting[index].count else { return nil }
            let matcher = state.waiting.remove(at: index)
            return (matcher.shot, matcher.answers)
        }
        if let (shot, answers) = done { shot.succeed(answers) }
    }

    private func unregister(id: UInt64) {
        matchers.withLock { $0.waiting.removeAll { $0.id == id } }
    }

    /// Writes `command` and waits for the notification whose first byte is `responseCode`.
    /// - Returns: the whole answer, response code included.
    /// - Throws: as ``request(_:responsePrefix:count:timeout:)``.
    public func request(_ command: [UInt8], responseCode: UInt8, timeout: Duration) async throws -> [UInt8] {
        try await request(command, responsePrefix: [responseCode], count: 1, timeout: timeout)[0]
    }

    /// Writes `command` and waits for `count` notifications that start with `responsePrefix`.
    ///
    /// The error names the stage the request was in: while the write is pending, its timeout
    /// and a link loss are the write's (``BLEOperation/Kind/write``, the write characteristic);
    /// once it is done, they are the wait for the answers (``BLEOperation/Kind/response``, the
    /// notify characteristic). Answers notified before the WriteValue reply count.
    /// - Parameters:
    ///   - command: the bytes written (Write Request when the characteristic has the `write`
    ///     flag, else Write Command).
    ///   - responsePrefix: the bytes an answer starts with; empty matches every notification.
    ///   - count: how many answers to collect (at least 1).
    ///   - timeout: the limit for the write and the answers together.
    /// - Returns: the answers, whole, in the order they were notified.
    /// - Throws: ``BLEError/timedOut(_:)``, ``BLEError/disconnected(_:)`` (write or response),
    ///   ``BLEError/outcomeUnknown(_:_:)`` (response) when the response characteristic leaves
    ///   after the write with no alike exported (the device changed its GATT database: the
    ///   answer can no longer come), the write's other errors, `CancellationError`.
    public func request(_ command: [UInt8], responsePrefix: [UInt8], count: Int = 1, timeout: Duration) async throws -> [[UInt8]] {
        let operation = device.device.operation(.response, service: notifyCharacteristic.service, characteristic: notifyCharacteristic.uuid)
        let type: ConnectedDevice.WriteType = writeCharacteristic.flags.contains("write") || !writeCharacteristic.flags.contains("write-without-response") ? .request : .command
        let deadline = ContinuousClock.now + timeout
        let written = Lock(false)
        return try await withOneShot { (shot: OneShot<[[UInt8]]>) in
            let id = matchers.withLock { state -> UInt64 in
                state.nextID += 1
                state.waiting.append(Matcher(id: state.nextID, prefix: responsePrefix, count: max(1, count), shot: shot))
                return state.nextID
            }
            shot.onFinish { [self] in unregister(id: id) }
            // While the write is pending, its own link watch and timeout decide.
            let lost = device.device.linkLost(during: operation)
            let responseLeft = Self.responseCharacteristicLeft(notifyCharacteristic, of: device, during: operation)
            device.session.watch(shot, during: operation) { cache, event in
                guard written.withLock({ $0 }) else { return .keepWaiting }
                if let error = lost(cache, event) { return .fail(error) }
                guard case .removed? = event else { return .keepWaiting }
                return responseLeft(cache).map { .fail($0) } ?? .keepWaiting
            }
            guard !shot.isResolved else { return }
            let writer = Task { [device, writeCharacteristic] in
                do {
                    try await device.write(writeCharacteristic, command, type: type, timeout: deadline - .now)
                } catch {
                    shot.fail(error)
                    return
                }
                written.withLock { $0 = true }
                // A link lost (or the response characteristic gone) between the write reply and
                // the flag: no later change will come.
                if let error = device.session.withCache({ lost($0, nil) ?? responseLeft($0) }) {
                    shot.fail(error)
                    return
                }
                do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
                shot.fail(BLEError.timedOut(operation))
            }
            shot.onFinish { writer.cancel() }
        }
    }
}

extension CommandChannel {
    /// Whether the response characteristic has left, none alike (its service and
    /// characteristic UUIDs) remaining under the device: the device changed its GATT database
    /// after the command was written, and the subscription went with the object (BlueZ does
    /// not carry notify sessions over to the objects it exports again), so the answer can no
    /// longer arrive. What the device did with the command is unknown:
    /// ``BLEError/outcomeUnknown(_:_:)`` naming the wait for the response.
    static func responseCharacteristicLeft(
        _ characteristic: GATTCharacteristic, of device: ConnectedDevice, during operation: BLEOperation
    ) -> @Sendable (ObjectCache) -> BLEError? {
        let devicePath = device.device.path
        let address = device.device.address
        return { cache in
            guard ConnectedDevice.alike(characteristic, in: cache.gattServices(of: devicePath)).isEmpty else { return nil }
            return BLEError.outcomeUnknown(operation, "characteristic \(characteristic.uuid.named) on \(address) left after the "
                + "command was written (the device changed its GATT database), with its notifications: whether the device "
                + "answered, and what it did with the command, is unknown")
        }
    }
}
