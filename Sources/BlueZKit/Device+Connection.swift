import DBusKit

/// How a connection came about: decides whether blectl disconnects at the end.
public enum ConnectionOrigin: Sendable, Equatable {
    /// Connected before we asked: never disconnected by us.
    case alreadyConnected
    /// We sent Connect: we disconnect it when done.
    case connectedByUs
}

extension Device {
    /// Connects (BlueZ Device1.Connect) unless already connected.
    ///
    /// On `org.bluez.Error.Failed` "le-connection-abort-by-local" it waits for Connected=false
    /// and tries again within the same `timeout`; when BlueZ removes the device object while
    /// the Connect is pending (it then never answers it), it finds the device again by
    /// scanning and tries again (at most 3 attempts in all). On timeout or
    /// cancellation it sends Disconnect, which makes BlueZ cancel the pending Connect (whose late
    /// error is dropped).
    /// - Returns: whether the device was already connected.
    /// - Throws: ``BLEError/timedOut(_:)`` (connect), ``BLEError/busy(_:dbusError:message:)``
    ///   (InProgress: another attempt holds the device), ``BLEError/failed(_:dbusError:message:)``,
    ///   ``BLEError/disconnected(_:)`` (the device object went away), `CancellationError`.
    public func connect(timeout: Duration) async throws -> ConnectionOrigin {
        let path = path
        if session.withCache({ $0.property("Connected", of: path, on: BlueZ.deviceInterface)?.bool }) == true {
            return .alreadyConnected
        }
        let operation = operation(.connect)
        let deadline = ContinuousClock.now + timeout
        var attempt = 0
        while true {
            attempt += 1
            do {
                _ = try await session.call(BlueZ.call(path, BlueZ.deviceInterface, "Connect"), operation: operation,
                                           timeout: deadline - .now) { cache, _ in
                    cache[path, BlueZ.deviceInterface] == nil ? BLEError.disconnected(operation) : nil
                }
                return .connectedByUs
            } catch BLEError.failed(_, BlueZ.Error.failed, BlueZ.FailureMessage.leConnectionAbortByLocal) where attempt < 3 {
                try await waitUntilDisconnected(timeout: deadline - .now, operation: operation)
                continue
            } catch BLEError.failed(_, BlueZ.Error.alreadyConnected, _) {
                return .alreadyConnected
            } catch BLEError.disconnected where attempt < 3 && session.withCache({ $0[path, BlueZ.deviceInterface] == nil }) {
                // BlueZ removed the device object while our Connect was pending, before any
                // link came up (5.66: a cancelled LE connection attempt times out in the kernel
                // and connect_failed_callback removes the temporary device, dropping the
                // pending Connect unanswered). Find the device again and retry in the deadline.
                _ = try await Device.find(address, on: adapter, timeout: deadline - .now)
                continue
            } catch let error as BLEError {
                if case .timedOut = error { await abandonConnect() }
                throw error
            } catch is CancellationError {
                await abandonConnect()
                throw CancellationError()
            }
        }
    }

    /// Disconnect after a Connect we gave up on: BlueZ cancels the pending Connect.
    private func abandonConnect() async {
        await disconnectAsCleanup(waitingUpTo: CleanupPolicy.interruptedTimeout)
    }

    private func waitUntilDisconnected(timeout: Duration, operation: BLEOperation) async throws {
        let path = path
        try await session.wait(for: operation, timeout: timeout) { cache, _ -> WaitStep<Void> in
            cache.property("Connected", of: path, on: BlueZ.deviceInterface)?.bool == true ? .keepWaiting : .done(())
        }
    }

    /// Waits for ServicesResolved=true (GATT discovery done), racing Connected=false and the
    /// device object being removed, which fail at once with ``BLEError/disconnected(_:)``.
    /// - Throws: ``BLEError/timedOut(_:)`` (service resolution), ``BLEError/disconnected(_:)``,
    ///   `CancellationError`.
    public func waitForServicesResolved(timeout: Duration) async throws {
        let path = path
        let operation = operation(.serviceResolution)
        try await session.wait(for: operation, timeout: timeout) { cache, _ -> WaitStep<Void> in
            guard let properties = cache[path, BlueZ.deviceInterface] else { return .fail(BLEError.disconnected(operation)) }
            if properties["ServicesResolved"]?.bool == true { return .done(()) }
            if properties["Connected"]?.bool == false { return .fail(BLEError.disconnected(operation)) }
            return .keepWaiting
        }
    }

    /// Sends Disconnect even when the task is cancelled, and waits for BlueZ's reply up to
    /// `limit` (cut to the ``CommandDeadline``) or until the task is cancelled; in every case
    /// the call is on the wire on return.
    func disconnectAsCleanup(waitingUpTo limit: Duration) async {
        await session.sendAsCleanup(BlueZ.call(path, BlueZ.deviceInterface, "Disconnect"), operation: operation(.disconnect), waitingUpTo: limit)
    }

    /// Device1.Disconnect; BlueZ replies once the link is down (after its 2 s disconnect timer).
    /// - Throws: ``BLEError/timedOut(_:)`` (disconnect), ``BLEError/failed(_:dbusError:message:)``.
    public func disconnect(timeout: Duration) async throws {
        _ = try await session.call(BlueZ.call(path, BlueZ.deviceInterface, "Disconnect"), operation: operation(.disconnect), timeout: timeout)
    }

    /// Connects, waits for services to resolve, runs `body`, and disconnects if we connected.
    ///
    /// - Parameters:
    ///   - timeout: the limit for connecting and resolving services together.
    ///   - disconnectTimeout: how long to wait for the Disconnect reply when `body` ends
    ///     normally; when interrupted, ``CleanupPolicy/interruptedTimeout``.
    /// - Throws: the errors of ``connect(timeout:)`` and ``waitForServicesResolved(timeout:)``,
    ///   what `body` throws; a ``BLEError/disconnected(_:)`` that came with Bluetooth itself
    ///   going away (bluetoothd stopping, the adapter powered off or removed) is thrown as
    ///   that ``BLEError/unavailable(_:)`` (``Adapter/unavailabilityAfterLinkLoss(within:)``).
    public func withConnection<T: Sendable>(
        timeout: Duration, disconnectTimeout: Duration = .seconds(4),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ConnectedDevice) async throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        var origin: ConnectionOrigin
        do {
            origin = try await connect(timeout: timeout)
        } catch {
            throw await refinedLinkLoss(error)
        }
        let result: Result<T, any Error>
        do {
            do {
                try await waitForServicesResolved(timeout: deadline - .now)
            } catch BLEError.disconnected where origin == .alreadyConnected && !Task.isCancelled {
                // The link we found was on its way down (BlueZ keeps Connected true for its
                // 2 s disconnect timer after another client's Disconnect, or ours from the
                // command before): nothing was done on it yet, so connect anew.
                origin = try await reconnectAfterLinkWentDown(deadline: deadline)
                try await waitForServicesResolved(timeout: deadline - .now)
            }
            result = .success(try await body(ConnectedDevice(device: self, origin: origin)))
        } catch {
            result = .failure(error)
        }
        if origin == .connectedByUs {
            // After success, wait for BlueZ to finish the disconnect (so that the next command
            // finds the device free); after a failure or an interruption, only briefly:
            // BlueZ completes the Disconnect on its own. An interruption that comes while we
            // wait stops the wait at once.
            let succeeded = (try? result.get()) != nil
            let limit = succeeded && !Task.isCancelled ? disconnectTimeout : CleanupPolicy.interruptedTimeout
            await disconnectAsCleanup(waitingUpTo: limit)
        }
        do {
            return try result.get()
        } catch {
            throw await refinedLinkLoss(error)
        }
    }

    /// Connects again once a link found up has gone down before anything was done on it:
    /// finds the device again if BlueZ removed its object, then connects within `deadline`.
    private func reconnectAfterLinkWentDown(deadline: ContinuousClock.Instant) async throws -> ConnectionOrigin {
        try await waitUntilDisconnected(timeout: deadline - .now, operation: operation(.connect))
        if session.withCache({ [path] in $0[path, BlueZ.deviceInterface] == nil }) {
            _ = try await Device.find(address, on: adapter, timeout: deadline - .now)
        }
        return try await connect(timeout: deadline - .now)
    }

    /// `error`, or when it is a disconnection that came with Bluetooth going away, that.
    func refinedLinkLoss(_ error: any Error) async -> any Error {
        guard let bleError = error as? BLEError, case .disconnected = bleError, !Task.isCancelled else { return error }
        return await adapter.unavailabilityAfterLinkLoss() ?? error
    }
}
