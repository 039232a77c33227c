import DBusKit

/// A characteristic's notifications on one connection, for as long as a body runs: as a
/// callback (``withNotifications(_:setupTimeout:onValue:_:)``) or a stream
/// (``withNotificationStream(_:setupTimeout:_:)``). StartNotify and StopNotify as every
/// notification user does them (ConnectedDevice+NotificationSetUp.swift).
extension ConnectedDevice {
    /// Runs `body` with notifications of `characteristic` on (StartNotify), delivering each
    /// value to `onValue` on the connection's queue, in bus order, each with the bytes its
    /// own signal carried (two notifications in one batch are two values); StopNotify when
    /// done (errors dropped). The watcher is in place before StartNotify, so no notification
    /// is missed. The Value change that echoes one of this session's own reads
    /// (``read(_:offset:timeout:)``) is not a notification and is not delivered. `onValue` may call
    /// back into the session (a call, ``Session/close()``), but must not block.
    ///
    /// A characteristic that can neither notify nor indicate is refused before anything is
    /// sent. StartNotify answered InProgress is sent again (every 50 ms) within
    /// `setupTimeout`; Failed "Already notifying" (older bluetoothd) counts as success. When
    /// the characteristic's object leaves while StartNotify is pending (the device changed its
    /// GATT database: BlueZ never answers it), StartNotify is sent again to its new object,
    /// found by its UUIDs within ``Device/characteristicRelocationTimeout`` (and
    /// `setupTimeout`), and values are taken from there.
    ///
    /// Interrupted while the StartNotify reply is pending, it waits for that reply (at most
    /// ``CleanupPolicy/pendingStartTimeout``) and sends StopNotify if notifications did start:
    /// BlueZ answers StopNotify with InProgress until then. A reply that comes later still
    /// gets its StopNotify, in the background, when it comes (within `setupTimeout`).
    /// - Throws: ``BLEError/notSupported(_:_:)`` (the flags, or the characteristic not found
    ///   again), ``BLEError/timedOut(_:)`` (notification setup), ``BLEError/disconnected(_:)``,
    ///   ``BLEError/failed(_:dbusError:message:)``, what `body` throws.
    public func withNotifications<T: Sendable>(
        _ characteristic: GATTCharacteristic, setupTimeout: Duration,
        onValue: @escaping @Sendable ([UInt8]) -> Void,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async throws -> T {
        // The characteristic's object path: a new one when its object left during StartNotify.
        let current = Lock(characteristic.path)
        let watcher = session.addWatcher { _, event in
            guard case .changed(let path, BlueZ.gattCharacteristicInterface, let changed, _)? = event,
                  path == current.withLock({ $0 }), let value = changed["Value"]?.bytes else { return nil }
            return { onValue(value) }
        }
        let deadline = ContinuousClock.now + setupTimeout
        let ending = Lock(false)
        let connected = self
        // Not a child of this task: its reply must be seen even when we are cancelled, so that
        // StopNotify follows a StartNotify that succeeded.
        let start = Task<GATTCharacteristic, any Error> {
            try await connected.turnOnNotifications(characteristic, by: .startNotify, deadline: deadline,
                                                    mayRetry: { !ending.withLock { $0 } },
                                                    onMove: { moved in current.withLock { $0 = moved.path } }).0
        }
        let result: Result<T, any Error>
        do {
            _ = try await awaitCancellable(start)
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        session.removeWatcher(watcher)
        ending.withLock { $0 = true }
        let session = session
        await runCleanup {
            if let started = await session.waitForPendingStart(start) {
                await session.stopNotifications(on: [started.path])
            } else {
                // Answered after the wait (or failed): stopped when the answer comes, bounded
                // by the start's own deadline, so that no session is left on for this client.
                Task {
                    guard let started = try? await start.value else { return }
                    await session.stopNotifications(on: [started.path])
                }
            }
        }
        return try result.get()
    }

    /// Runs `body` with the notifications of `characteristic` as a stream (StartNotify first,
    /// StopNotify when `body` ends, as ``withNotifications(_:setupTimeout:onValue:_:)``).
    ///
    /// The stream yields every notified value once, in bus order (unbounded buffer: none is
    /// dropped, whatever the reader's pace). It ends with ``BLEError/disconnected(_:)`` when
    /// the link drops (Connected false or the device object removed), with
    /// ``BLEError/unavailable(_:)`` when bluetoothd leaves or the bus is lost, and normally
    /// when `body` returns.
    /// - Throws: as ``withNotifications(_:setupTimeout:onValue:_:)``, and what `body` throws.
    public func withNotificationStream<T: Sendable>(
        _ characteristic: GATTCharacteristic, setupTimeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncThrowingStream<[UInt8], any Error>) async throws -> T
    ) async throws -> T {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        let ending = finishingOnLinkLoss(continuation, of: characteristic)
        defer {
            session.removeWatcher(ending)
            continuation.finish()
        }
        return try await withNotifications(characteristic, setupTimeout: setupTimeout, onValue: { continuation.yield($0) }) {
            try await body(stream)
        }
    }
}
