import DBusKit

/// What a wait condition decides on each look at the cache.
enum WaitStep<Value: Sendable>: Sendable {
    case done(Value)
    case fail(any Error)
    case keepWaiting
}

extension Session {
    /// Waits until `evaluate` decides, looking at the cache now and after every change batch.
    ///
    /// bluetoothd leaving the bus fails the wait with ``BLEError/unavailable(_:)`` unless
    /// `evaluate` decides otherwise first.
    /// - Throws: what `evaluate` fails with, ``BLEError/timedOut(_:)`` naming `operation`,
    ///   `CancellationError`.
    func wait<Value: Sendable>(
        for operation: BLEOperation, timeout: Duration,
        _ evaluate: @escaping @Sendable (ObjectCache, [CacheChange]) -> WaitStep<Value>
    ) async throws -> Value {
        try await withOneShot(timeout: timeout, timeoutError: { BLEError.timedOut(operation) }) { (shot: OneShot<Value>) in
            watch(shot, evaluate)
        }
    }

    /// Resolves `shot` from cache changes (see ``wait(for:timeout:_:)``); the watcher is
    /// removed when the shot finishes, whoever resolves it.
    func watch<Value: Sendable>(
        _ shot: OneShot<Value>,
        _ evaluate: @escaping @Sendable (ObjectCache, [CacheChange]) -> WaitStep<Value>
    ) {
        let id = addWatcher { cache, changes in
            if changes.contains(where: { if case .bluezVanished = $0 { true } else if case .busLost = $0 { true } else { false } }) {
                let lost = changes.contains { if case .busLost = $0 { true } else { false } }
                return { shot.fail(BLEError.unavailable(lost ? .busUnreachable("the connection to the system bus was lost") : .bluezLeft)) }
            }
            switch evaluate(cache, changes) {
            case .keepWaiting: return nil
            case .done(let value): return { shot.succeed(value) }
            case .fail(let error): return { shot.fail(error) }
            }
        }
        shot.onFinish { [weak self] in self?.removeWatcher(id) }
    }

    /// Calls a BlueZ method and waits for its reply, failing early when `abortIf` says so
    /// (for example: the device disconnected).
    /// - Parameter onReply: runs with a successful reply on the connection's queue, before any
    ///   signal that follows the reply is folded into the cache.
    /// - Throws: the D-Bus error mapped by ``BLEError/from(_:during:)``, ``BLEError/timedOut(_:)``,
    ///   what `abortIf` fails with, `CancellationError`.
    func call(
        _ call: MethodCall, operation: BLEOperation, timeout: Duration,
        abortIf: (@Sendable (ObjectCache, [CacheChange]) -> (any Error)?)? = nil,
        onReply: (@Sendable (Message) -> Void)? = nil
    ) async throws -> Message {
        do {
            return try await withOneShot(timeout: timeout, timeoutError: { BLEError.timedOut(operation) }) { (shot: OneShot<Message>) in
                watch(shot) { cache, changes in
                    if let abortIf, let error = abortIf(cache, changes) { return .fail(error) }
                    return .keepWaiting
                }
                guard !shot.isResolved else { return }
                let pending = connection.send(call) { result in
                    if let onReply, case .success(let reply) = result { onReply(reply) }
                    shot.resolve(result.mapError { $0 })
                }
                shot.onFinish { pending.cancel() }
            }
        } catch {
            throw BLEError.from(error, during: operation)
        }
    }
}
