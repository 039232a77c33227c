import DBusKit
import Glibc

/// How a connection came about: decides whether blectl disconnects at the end.
public enum ConnectionOrigin: Sendable, Equatable {
    /// Connected before we asked: never disconnected by us.
    case alreadyConnected
    /// We sent Connect: we disconnect it when done.
    case connectedByUs
}

extension Device {
    /// Connects (BlueZ Device1.Connect) unless already connected, over LE.
    ///
    /// Where the user set Device1.PreferredBearer to "le" (5.80 and later with
    /// `--experimental`; ``preferredBearer``), BlueZ connects over LE and nothing more is
    /// needed. Elsewhere BlueZ connects a dual-mode device (one public address, BR/EDR and
    /// LE) over the bearer it saw most recently (src/device.c select_conn_bearer: whole seconds, a tie goes
    /// to BR/EDR). Over BR/EDR the ACL comes up, SDP finds no profile to connect, and Connect
    /// fails (`org.bluez.Error.NotAvailable` "br-connection-profile-unavailable", or another
    /// `br-connection-*` reason; `org.bluez.Error.BREDR.*` on newer BlueZ) with Connected and
    /// ServicesResolved true but no GATT objects. So: a device with a Class of Device (seen
    /// over BR/EDR) and a public address is first heard by an LE-only discovery (at most
    /// ``leSightingWait``); and on a BR/EDR failure the BR/EDR link is disconnected, an
    /// LE-only discovery run in a later wall-clock second than the failure, and Connect tried
    /// once more, all within `timeout`. A second BR/EDR failure is thrown (after Disconnect):
    /// it happens when the device's LE advertisements say it does BR/EDR too (flags without
    /// "BR/EDR Not Supported"), which makes BlueZ 5.66 count every LE sighting as a BR/EDR one.
    ///
    /// A Connect that meets another connection of the device in progress (another client's,
    /// or another task's of this process: `org.bluez.Error.InProgress`, or
    /// `org.bluez.Error.Failed` "Operation already in progress") waits for that link
    /// (Connected=true) and uses it, returning ``ConnectionOrigin/alreadyConnected``; when
    /// none comes up within ``connectionInProgressWait`` (the other attempt failed, or is
    /// slow), it sends Connect again, all within `timeout`. That other attempt is never
    /// cancelled from here.
    ///
    /// On `org.bluez.Error.Failed` "le-connection-abort-by-local" it waits for Connected=false
    /// and tries again within the same `timeout`; when other devices of the adapter are
    /// connected (the controller may hold no more links), it first waits for one of those
    /// links to go down, as long as the timeout allows, without counting the attempt (the
    /// session's Connects waiting so go one at a time, in the order they came); when BlueZ removes the device object while
    /// the Connect is pending (it then never answers it), or answers UnknownObject, it finds
    /// the device again by scanning and tries again (at most 3 attempts in all). On timeout or
    /// cancellation it sends Disconnect, which makes BlueZ cancel the pending Connect (whose late
    /// error is dropped).
    ///
    /// A Connect that fails never had a link up, so it never throws ``BLEError/disconnected(_:)``:
    /// BlueZ's "not connected" answers are failures with their D-Bus name kept.
    /// - Returns: whether the device was already connected.
    /// - Throws: ``BLEError/timedOut(_:)`` (connect), ``BLEError/busy(_:dbusError:message:)``
    ///   (another attempt held the device until `timeout`: BlueZ's last answer),
    ///   ``BLEError/failed(_:dbusError:message:)``
    ///   (name and message as BlueZ sent them), ``BLEError/deviceNotFound(_:)`` (the device
    ///   object went away, on the last attempt, or could not be found again), `CancellationError`.
    public func connect(timeout: Duration) async throws -> ConnectionOrigin {
        if isConnected {
            return .alreadyConnected
        }
        let operation = operation(.connect)
        let deadline = ContinuousClock.now + timeout
        if mayConnectOverBREDR && preferredBearer != "le" {
            try await hearOverLE(within: min(Self.leSightingWait, deadline - .now))
        }
        return try await connectAttempts(operation: operation, deadline: deadline)
    }

    /// Connect's attempts (see ``connect(timeout:)``), until `deadline`.
    private func connectAttempts(operation: BLEOperation, deadline: ContinuousClock.Instant) async throws -> ConnectionOrigin {
        let path = path
        var attempt = 0
        var bredrFailures = 0
        var holdsLinkTurn = false
        defer { if holdsLinkTurn { session.linkTurns.release() } }
        while true {
            attempt += 1
            do {
                _ = try await session.call(BlueZ.call(path, BlueZ.deviceInterface, "Connect"), operation: operation,
                                           timeout: deadline - .now) { [address] cache, _ in
                    cache[path, BlueZ.deviceInterface] == nil ? BLEError.deviceNotFound(address) : nil
                }
                return .connectedByUs
            } catch let error as BLEError where Self.mayBeOutOfLinks(error) {
                try await waitUntilDisconnected(timeout: deadline - .now, operation: operation)
                let others = otherLinks()
                if !others.isEmpty {
                    // Perhaps the controller holds no more links (see Device+LinkSlots.swift):
                    // in turn with this session's other Connects waiting for one (the turn
                    // kept until this Connect ends), and once one of the others is down, try
                    // again; not one of the attempts counted. No turn or no link down before
                    // the deadline: this failure stands.
                    attempt -= 1
                    if !holdsLinkTurn {
                        guard try await session.linkTurns.acquire(before: deadline) else { throw error }
                        holdsLinkTurn = true
                        continue  // a link may have gone down while waiting in line
                    }
                    guard try await waitForLinkDown(among: others, deadline: deadline, operation: operation) else { throw error }
                    continue
                }
                guard attempt < 3 else { throw error }
                continue
            } catch let error as BLEError where Self.isBREDRFailure(error) {
                // BlueZ took BR/EDR (see above): drop that link, make LE the bearer seen
                // last, and try once more; a second time, the device leaves no way to LE.
                bredrFailures += 1
                let failedAt = time(nil)
                try await dropBREDRLink(deadline: deadline, operation: operation)
                guard bredrFailures < 2 else { throw error }
                try await Self.waitForWallClockSecond(after: failedAt, deadline: deadline, operation: operation)
                try await hearOverLE(within: min(Self.leSightingWait, deadline - .now))
                continue
            } catch BLEError.failed(_, BlueZ.Error.alreadyConnected, _) {
                return .alreadyConnected
            } catch BLEError.busy(let busyOperation, let name, let message) {
                // Another connection in progress (see above): its link, or Connect again.
                // Not one of the attempts counted: nothing failed yet.
                attempt -= 1
                if try await waitForOtherConnection(deadline: deadline, operation: operation,
                                                  busy: .busy(busyOperation, dbusError: name, message: message)) {
                    return .alreadyConnected
                }
                continue
            } catch BLEError.deviceNotFound where attempt < 3 {
                // BlueZ removed the device object while our Connect was pending, before any
                // link came up (5.66: a cancelled LE connection attempt times out in the kernel
                // and connect_failed_callback removes the temporary device, dropping the
                // pending Connect unanswered), or answered UnknownObject. Find the device
                // again and retry in the deadline.
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

    /// How long a Connect that met another connection of the device in progress waits for
    /// that link before it sends Connect again: 500 ms. BlueZ signals the link coming up
    /// (Connected=true), but not another client's attempt failing, so this is how soon such
    /// a failure is noticed; each try costs one call answered at once while the other
    /// attempt is still pending.
    public static let connectionInProgressWait: Duration = .milliseconds(500)

    /// Waits for the link of another connection in progress: true once Connected is true,
    /// false after ``connectionInProgressWait`` (or when the device object goes away), both
    /// before `deadline`.
    /// - Throws: `busy`, BlueZ's answer to our Connect, at `deadline` (the other attempt
    ///   held the device all along); `CancellationError`. Neither sends Disconnect, which
    ///   would cancel the other attempt.
    private func waitForOtherConnection(deadline: ContinuousClock.Instant, operation: BLEOperation, busy: BLEError) async throws -> Bool {
        let path = path
        let left = deadline - .now
        guard left > .zero else { throw busy }
        // Near the deadline, wait to its end rather than send a Connect that might time out
        // pending (its clean-up, a Disconnect, would cancel the other attempt).
        let wait = left < Self.connectionInProgressWait * 2 ? left : Self.connectionInProgressWait
        do {
            return try await session.wait(for: operation, timeout: wait) { cache, _ -> WaitStep<Bool> in
                guard let properties = cache[path, BlueZ.deviceInterface] else { return .done(false) }
                return properties["Connected"]?.bool == true ? .done(true) : .keepWaiting
            }
        } catch BLEError.timedOut {
            guard deadline > .now else { throw busy }
            return false
        }
    }

    /// Disconnect after a Connect we gave up on: BlueZ cancels the pending Connect.
    private func abandonConnect() async {
        await disconnectAsCleanup(waitingUpTo: CleanupPolicy.interruptedTimeout)
    }

    /// Whether the device's Connected is true in the cache.
    var isConnected: Bool {
        let path = path
        return session.withCache { $0.property("Connected", of: path, on: BlueZ.deviceInterface)?.bool } == true
    }

    func waitUntilDisconnected(timeout: Duration, operation: BLEOperation) async throws {
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
            if properties["Connected"]?.bool == false {
                return .fail(BLEError.disconnected(operation, reason: cache.disconnectReason(of: path)))
            }
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
    /// Calls on one device in one session share its link: a call made while another is in
    /// progress uses the same link (its Connect waits for the one in progress, see
    /// ``connect(timeout:)``, and its ``ConnectedDevice/origin`` is
    /// ``ConnectionOrigin/alreadyConnected``), and the link is disconnected when the last of
    /// them returns, if one of them connected it. A link another client connected is left up.
    ///
    /// A link found up (``ConnectionOrigin/alreadyConnected``) may be on its way down:
    /// bluetoothd 5.66 keeps Connected and ServicesResolved true for its 2 s disconnect timer
    /// after a Disconnect (another client's, or the command before's), answers reads and
    /// writes meanwhile, and refuses StartNotify with `org.bluez.Error.NotConnected`
    /// ("Not Connected"; bluetoothd logs "Device is disconnecting", bluez/src/gatt-client.c). When such a link goes down before
    /// its services are resolved, or `body` fails with ``BLEError/disconnected(_:)`` during an
    /// operation that changes nothing on the device (a read, a service lookup, a notification
    /// setup), this waits (within `timeout`) for
    /// Connected=false, connects anew and runs `body` once more on that link, which it then
    /// disconnects at the end. A write that fails so is not repeated: whether it reached the
    /// device is unknown.
    ///
    /// - Parameters:
    ///   - timeout: the limit for connecting and resolving services together.
    ///   - disconnectTimeout: whether, and how long, to wait for the link to go down (the
    ///     Disconnect reply, which BlueZ sends once the link is down, after its 2 s disconnect
    ///     timer: bluez/src/device.c DISCONNECT_TIMER). Zero, the default, sends the
    ///     Disconnect, makes sure it has left for the bus, and returns at once: bluetoothd
    ///     completes it even when the caller then leaves the bus or exits (the link stays up,
    ///     and usable by the next caller, until its timer has run). A positive limit waits up
    ///     to it when `body` ends normally (for a caller that needs the device disconnected on
    ///     return); after a failure or an interruption, at most ``CleanupPolicy/interruptedTimeout``.
    /// - Throws: the errors of ``connect(timeout:)`` and ``waitForServicesResolved(timeout:)``,
    ///   ``BLEError/timedOut(_:)`` (connect) when a link found up does not go down in time to
    ///   connect anew, what `body` throws; a ``BLEError/disconnected(_:)`` that came with Bluetooth itself
    ///   going away (bluetoothd stopping, the adapter powered off or removed) is thrown as
    ///   that ``BLEError/unavailable(_:during:dbusError:)`` naming the operation
    ///   (``Adapter/unavailabilityAfterLinkLoss(within:)``).
    public func withConnection<T: Sendable>(
        timeout: Duration, disconnectTimeout: Duration = .zero,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ConnectedDevice) async throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        let links = session.linkUsers
        links.enter(path)
        var origin: ConnectionOrigin
        do {
            origin = try await connect(timeout: timeout)
        } catch {
            if links.leave(path) {
                // Another user's link, connected here, which that user left meanwhile.
                await disconnectAsCleanup(waitingUpTo: Self.disconnectWait(disconnectTimeout, succeeded: false))
            }
            throw await refinedLinkLoss(error)
        }
        if origin == .connectedByUs { links.connected(path) }
        let result: Result<T, any Error>
        do {
            do {
                try await waitForServicesResolved(timeout: deadline - .now)
            } catch BLEError.disconnected where origin == .alreadyConnected && !Task.isCancelled {
                // The link we found was on its way down (BlueZ keeps Connected true for its
                // 2 s disconnect timer after another client's Disconnect, or ours from the
                // command before): nothing was done on it yet, so connect anew.
                origin = try await reconnectAfterLinkWentDown(deadline: deadline)
                if origin == .connectedByUs { links.connected(path) }
                try await waitForServicesResolved(timeout: deadline - .now)
            }
            do {
                result = .success(try await body(ConnectedDevice(device: self, origin: origin)))
            } catch let error as BLEError where origin == .alreadyConnected && !Task.isCancelled && error.isLinkLossBeforeAnyEffect {
                // The link we found went down under `body` (or is going down: bluetoothd 5.66
                // refuses StartNotify with NotConnected during its disconnect timer, while reads
                // still work) before anything took effect on the device: run `body` once more
                // on a link of our own.
                origin = try await reconnectAfterLinkWentDown(deadline: deadline)
                if origin == .connectedByUs { links.connected(path) }
                try await waitForServicesResolved(timeout: deadline - .now)
                result = .success(try await body(ConnectedDevice(device: self, origin: origin)))
            }
        } catch {
            result = .failure(error)
        }
        if links.leave(path) {
            // The last user of a link connected here. After success, wait up to
            // `disconnectTimeout` for BlueZ to finish the disconnect; after a failure or an
            // interruption, at most briefly: BlueZ completes the Disconnect on its own, even
            // once we have left the bus. An interruption that comes while we wait stops the
            // wait at once. The Disconnect is on the wire in every case.
            let succeeded = (try? result.get()) != nil
            await disconnectAsCleanup(waitingUpTo: Self.disconnectWait(disconnectTimeout, succeeded: succeeded))
        }
        do {
            return try result.get()
        } catch {
            throw await refinedLinkLoss(error)
        }
    }

    /// How long clean-up waits for the Disconnect reply: `disconnectTimeout` after a success,
    /// at most ``CleanupPolicy/interruptedTimeout`` after a failure or an interruption.
    static func disconnectWait(_ disconnectTimeout: Duration, succeeded: Bool) -> Duration {
        succeeded && !Task.isCancelled ? disconnectTimeout : min(disconnectTimeout, CleanupPolicy.interruptedTimeout)
    }

    /// Connects again once a link found up has gone down before anything was done on it:
    /// waits for Connected=false (operation `disconnect`: the wait is for BlueZ to finish
    /// disconnecting, and a timeout there names it), finds the device again if BlueZ removed
    /// its object, then connects within `deadline`.
    func reconnectAfterLinkWentDown(deadline: ContinuousClock.Instant) async throws -> ConnectionOrigin {
        try await waitUntilDisconnected(timeout: deadline - .now, operation: operation(.disconnect))
        if session.withCache({ [path] in $0[path, BlueZ.deviceInterface] == nil }) {
            _ = try await Device.find(address, on: adapter, timeout: deadline - .now)
        }
        return try await connect(timeout: deadline - .now)
    }

    /// `error`, or when it is a disconnection that came with Bluetooth going away, that.
    func refinedLinkLoss(_ error: any Error) async -> any Error {
        guard let bleError = error as? BLEError, case .disconnected(let operation, _) = bleError, !Task.isCancelled else { return error }
        return await adapter.unavailabilityAfterLinkLoss()?.during(operation) ?? error
    }
}

extension BLEError {
    /// Whether this is a link loss during an operation that changes nothing on the device (a
    /// read, a service lookup or resolution, a battery read, a notification setup that
    /// StartNotify or AcquireNotify refused or that the loss cut short): doing it again on a
    /// new link repeats nothing the device saw.
    var isLinkLossBeforeAnyEffect: Bool {
        guard case .disconnected(let operation, _) = self else { return false }
        switch operation.kind {
        case .read, .serviceLookup, .serviceResolution, .battery, .notificationSetup: return true
        default: return false
        }
    }
}
