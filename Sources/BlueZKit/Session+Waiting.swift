import DBusKit

/// What a wait condition decides on each look at the cache.
public enum WaitStep<Value: Sendable>: Sendable {
    /// The wait ends with this value.
    case done(Value)
    /// The wait ends with this error.
    case fail(any Error)
    /// Look again at the next event.
    case keepWaiting
}

extension Session {
    /// Waits until `evaluate` decides, looking at the cache now and after every event.
    ///
    /// `evaluate` runs on the connection's queue under the session lock: first at once, with
    /// the cache as it is and no event (nil), atomically with the registration, so nothing
    /// can happen between that look and the next; then once per event, in bus order, with
    /// that event (and its values) and the cache as it was right after it, never a later
    /// state. It must be quick and must not call back into the session.
    ///
    /// bluetoothd leaving the bus or the bus being lost (or the session closed) fails the
    /// wait with ``BLEError/unavailable(_:during:dbusError:)`` naming `operation`, whatever
    /// `evaluate` would say of the emptied cache.
    /// - Parameters:
    ///   - operation: named by the timeout error.
    ///   - timeout: the limit.
    /// - Returns: the value of ``WaitStep/done(_:)``.
    /// - Throws: what `evaluate` fails with, ``BLEError/timedOut(_:)`` naming `operation`,
    ///   ``BLEError/unavailable(_:)``, `CancellationError`.
    public func wait<Value: Sendable>(
        for operation: BLEOperation, timeout: Duration,
        _ evaluate: @escaping @Sendable (ObjectCache, SessionEvent?) -> WaitStep<Value>
    ) async throws -> Value {
        began(operation)
        do {
            return try await withOneShot(timeout: timeout, timeoutError: { BLEError.timedOut(operation) }) { (shot: OneShot<Value>) in
                watch(shot, during: operation, evaluate)
            }
        } catch let error as BLEError {
            throw error.during(operation)
        }
    }

    /// Resolves `shot` from events (see ``wait(for:timeout:_:)``); the watcher is removed
    /// when the shot finishes, whoever resolves it. bluetoothd or the bus going away fails
    /// it with ``BLEError/unavailable(_:during:dbusError:)`` naming `operation` (nil: none).
    func watch<Value: Sendable>(
        _ shot: OneShot<Value>, during operation: BLEOperation?,
        _ evaluate: @escaping @Sendable (ObjectCache, SessionEvent?) -> WaitStep<Value>
    ) {
        let id = addWatcher { cache, event in
            if let error = event?.unavailability { return { shot.fail(operation.map { error.during($0) } ?? error) } }
            switch evaluate(cache, event) {
            case .done(let value): return { shot.succeed(value) }
            case .fail(let error): return { shot.fail(error) }
            case .keepWaiting: return nil
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
    package func call(
        _ call: MethodCall, operation: BLEOperation, timeout: Duration,
        abortIf: (@Sendable (ObjectCache, SessionEvent?) -> (any Error)?)? = nil,
        onReply: (@Sendable (Message) -> Void)? = nil
    ) async throws -> Message {
        began(operation)
        do {
            return try await withOneShot(timeout: timeout, timeoutError: { BLEError.timedOut(operation) }) { (shot: OneShot<Message>) in
                watch(shot, during: operation) { cache, event in
                    if let abortIf, let error = abortIf(cache, event) { return .fail(error) }
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
            let mapped = BLEError.from(error, during: operation)
            guard let refusal = mapped as? BLEError, case .notPermitted = refusal else { throw mapped }
            throw refusal.explainingClaimedService(bluez: bluezVersion)
        }
    }

    /// Sends a clean-up call (StopDiscovery, StopNotify, Disconnect) whatever the state of
    /// this task, then waits for its reply up to `limit`, cut to the ``CommandDeadline``
    /// (not at all once it has passed), and makes sure it is written to the bus. The reply
    /// and its errors are dropped: clean-up never replaces a result. `operation`, when given,
    /// is reported to the observer as begun (the wait for a disconnection).
    func sendAsCleanup(_ call: MethodCall, operation: BLEOperation? = nil, waitingUpTo limit: Duration) async {
        if let operation { began(operation) }
        let replied = OneShot<Void>()
        // Enqueued now: sent even when the wait below is skipped or cancelled.
        let pending = connection.send(call) { _ in replied.succeed(()) }
        let budget = CleanupPolicy.budget(limit)
        if budget > .zero {
            _ = try? await withOneShot(timeout: budget) { (wait: OneShot<Void>) in replied.onFinish { wait.succeed(()) } }
        }
        await connection.flush(within: max(CleanupPolicy.budget(CleanupPolicy.interruptedTimeout), CleanupPolicy.wireTime))
        pending.cancel()
    }
}
