import DBusKit
import Synchronization

/// Request/response over two characteristics: a command written to one, the answer taken from
/// notifications on another, matched by the answer's first byte (the response code).
///
/// Notifications are subscribed before anything is written, and a request registers its
/// matcher before its write, so an answer that arrives before the WriteValue reply is still
/// matched. Notifications no request waits for are ignored. Several requests may be in flight;
/// requests waiting for the same response code are answered in order.
public final class CommandChannel: Sendable {
    public let device: ConnectedDevice
    public let writeCharacteristic: GATTCharacteristic
    public let notifyCharacteristic: GATTCharacteristic

    private struct Matchers {
        var waiting: [UInt8: [(id: UInt64, shot: OneShot<[UInt8]>)]] = [:]
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
        _ body: (CommandChannel) async throws -> T
    ) async throws -> T {
        // bluetoothd passes on a write to a characteristic whatever its Flags say, and a
        // device may take it (seen on the real rig: a vendor "command" overwrote the Battery
        // Level); refuse before touching the device.
        try require(write, oneOf: ["write", "write-without-response"], for: .write, "be written", on: device)
        try require(notify, oneOf: ["notify", "indicate"], for: .notificationSetup, "notify", on: device)
        let channel = CommandChannel(device: device, write: write, notify: notify)
        return try await device.withNotifications(notify, setupTimeout: setupTimeout, onValue: { channel.deliver($0) }) {
            try await body(channel)
        }
    }

    /// Throws ``BLEError/notSupported(_:_:)`` (operation `kind`) unless `characteristic`
    /// has one of `flags`; `ability` completes "cannot …" in the message.
    private static func require(_ characteristic: GATTCharacteristic, oneOf flags: [String], for kind: BLEOperation.Kind,
                                _ ability: String, on device: ConnectedDevice) throws {
        guard !flags.contains(where: characteristic.flags.contains) else { return }
        throw BLEError.notSupported(
            device.device.operation(kind, service: characteristic.service, characteristic: characteristic.uuid),
            "characteristic \(characteristic.uuid.shortString) in service \(characteristic.service.shortString) on "
                + "\(device.device.address) cannot \(ability) (flags: \(characteristic.flags.joined(separator: " ")))")
    }

    /// Requests waiting for an answer (for tests: nothing may be left after a request).
    package var waitingCount: Int { matchers.withLock { $0.waiting.values.reduce(0) { $0 + $1.count } } }

    private func deliver(_ value: [UInt8]) {
        guard let code = value.first else { return }
        let shot: OneShot<[UInt8]>? = matchers.withLock { state in
            guard var queue = state.waiting[code], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            state.waiting[code] = queue.isEmpty ? nil : queue
            return first.shot
        }
        shot?.succeed(value)
    }

    private func unregister(code: UInt8, id: UInt64) {
        matchers.withLock { state in
            state.waiting[code]?.removeAll { $0.id == id }
            if state.waiting[code]?.isEmpty == true { state.waiting[code] = nil }
        }
    }

    /// Writes `command` and waits for the notification whose first byte is `responseCode`.
    ///
    /// The error names the stage the request was in: while the write is pending, its timeout
    /// and a link loss are the write's (``BLEOperation/Kind/write``, the write characteristic);
    /// once it is done, they are the wait for the answer (``BLEOperation/Kind/response``, the
    /// notify characteristic). An answer notified before the WriteValue reply is taken.
    /// - Parameter timeout: the limit for the write and the answer together.
    /// - Returns: the whole answer, response code included.
    /// - Throws: ``BLEError/timedOut(_:)``, ``BLEError/disconnected(_:)`` (write or response),
    ///   the write's other errors, `CancellationError`.
    public func request(_ command: [UInt8], responseCode: UInt8, timeout: Duration) async throws -> [UInt8] {
        let operation = device.device.operation(.response, service: notifyCharacteristic.service, characteristic: notifyCharacteristic.uuid)
        let type: ConnectedDevice.WriteType = writeCharacteristic.flags.contains("write") || !writeCharacteristic.flags.contains("write-without-response") ? .request : .command
        let deadline = ContinuousClock.now + timeout
        let written = Lock(false)
        return try await withOneShot { (shot: OneShot<[UInt8]>) in
            let id = matchers.withLock { state -> UInt64 in
                state.nextID += 1
                state.waiting[responseCode, default: []].append((state.nextID, shot))
                return state.nextID
            }
            shot.onFinish { [self] in unregister(code: responseCode, id: id) }
            // While the write is pending, its own link watch and timeout decide.
            let lost = device.device.linkLost(during: operation)
            device.session.watch(shot) { cache, changes in
                guard written.withLock({ $0 }) else { return .keepWaiting }
                return lost(cache, changes).map { .fail($0) } ?? .keepWaiting
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
                // A link lost between the write reply and the flag: no later change will come.
                if let error = device.session.withCache({ lost($0, nil) }) {
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
