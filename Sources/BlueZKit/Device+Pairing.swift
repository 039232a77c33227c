import DBusKit

/// A device's pairing state: Device1.Paired, Bonded and Trusted (bluez/doc/org.bluez.Device.rst).
public struct PairingState: Sendable, Equatable {
    /// Paired: keys were exchanged (for this connection at least).
    public var paired: Bool
    /// Bonded: the keys are stored, so later connections are encrypted without pairing
    /// again. nil when BlueZ has no such property (before 5.66).
    public var bonded: Bool?
    /// Trusted: BlueZ lets the device connect and use services without asking an agent.
    public var trusted: Bool

    public init(paired: Bool, bonded: Bool?, trusted: Bool) {
        self.paired = paired
        self.bonded = bonded
        self.trusted = trusted
    }

    /// From a Device1 property dictionary; missing booleans read as false (bonded: nil).
    init(_ properties: [String: DBusValue]) {
        self.init(paired: properties["Paired"]?.bool ?? false, bonded: properties["Bonded"]?.bool,
                  trusted: properties["Trusted"]?.bool ?? false)
    }
}

/// How ``Device/withPairing(agent:timeout:disconnectTimeout:isolation:_:)`` found or left the device.
public enum PairingOutcome: Sendable, Equatable {
    /// Paired before: no Pair was sent (or Pair answered AlreadyExists: paired meanwhile).
    case alreadyPaired
    /// Pair succeeded.
    case paired
}

extension Device {
    /// Paired, Bonded and Trusted as last signalled; nil when BlueZ does not know the device.
    public var pairingState: PairingState? {
        let path = path
        return session.withCache { $0[path, BlueZ.deviceInterface].map { PairingState($0.dictionary) } }
    }

    /// Reads Paired, Bonded and Trusted from bluetoothd (Properties.GetAll of Device1), not
    /// from the cache.
    /// - Throws: ``BLEError/deviceNotFound(_:)`` (no such device object),
    ///   ``BLEError/timedOut(_:)``, ``BLEError/unavailable(_:)``, `CancellationError`.
    public func readPairingState(timeout: Duration) async throws -> PairingState {
        let operation = operation(.pair)
        let reply: Message
        do {
            reply = try await session.call(BlueZ.call(path, BlueZ.properties, "GetAll", [.string(BlueZ.deviceInterface)]),
                                           operation: operation, timeout: timeout)
        } catch BLEError.failed(_, let name, _) where [DBusErrorName.unknownObject, DBusErrorName.invalidArgs].contains(name) {
            throw BLEError.deviceNotFound(address)
        }
        guard let properties = reply.body.first?.stringKeyedDictionary else {
            throw BLEError.protocolError(operation, "Properties.GetAll of Device1 returned no dictionary")
        }
        return PairingState(properties.mapValues(\.unwrapped))
    }

    /// Sets Device1.Trusted (Properties.Set).
    /// - Throws: ``BLEError/failed(_:dbusError:message:)`` (operation `trust`),
    ///   ``BLEError/timedOut(_:)``, ``BLEError/unavailable(_:)``, `CancellationError`.
    public func setTrusted(_ trusted: Bool, timeout: Duration) async throws {
        try await session.setProperty("Trusted", of: path, on: BlueZ.deviceInterface, to: .boolean(trusted),
                                      operation: operation(.trust), timeout: timeout)
    }

    /// Pairs with the device (Device1.Pair) unless it is paired already, runs `body`, and
    /// closes a link Pair opened.
    ///
    /// When BlueZ already has the device paired, nothing is sent: `body` runs with
    /// ``PairingOutcome/alreadyPaired``. Else `agent` (when given) is registered for the
    /// time of the Pair call and `body` (``Session/withAgent(_:timeout:isolation:_:)``), so
    /// bluetoothd asks it what the pairing method needs; without one, bluetoothd pairs as
    /// `NoInputNoOutput` (or asks the default agent). Pair connects the device first when it
    /// is not connected (bluez/src/device.c pair_device) and answers once the keys are
    /// exchanged and the services resolved; BlueZ leaves that link up, so it is disconnected
    /// at the end (Disconnect, as for every connection blectl makes; a link that was up
    /// before is left alone).
    ///
    /// When the Pair times out or the task is cancelled, CancelPairing is sent (BlueZ then
    /// fails the Pair with AuthenticationCanceled and sends the agent Cancel), then the agent
    /// is unregistered and the link Pair may have opened is disconnected, which also stops a
    /// connection attempt still under way.
    ///
    /// A link found up may be on its way down (bluetoothd 5.66 keeps it for its 2 s disconnect
    /// timer after a Disconnect, such as the one the command before sent): when its loss ends
    /// the bonding (Pair failing while Connected turned false), this waits for Connected=false
    /// and sends Pair once more within `timeout`; Pair then brings up a link of its own, which
    /// is disconnected at the end like any link Pair opened. Likewise, when the link found up
    /// goes down before bluetoothd handles the Pair (Connected=false seen while Pair is
    /// pending), the link Pair then brings up is Pair's, and disconnected at the end.
    ///
    /// - Parameters:
    ///   - agent: the agent to register, or nil.
    ///   - timeout: the limit for registering the agent and pairing (connecting and service
    ///     resolution included).
    ///   - disconnectTimeout: how long to wait for the Disconnect reply when `body` ends
    ///     normally; when interrupted or failed, at most ``CleanupPolicy/interruptedTimeout``
    ///     (zero: sent and on the wire, not waited for; bluetoothd completes it without us).
    /// - Returns: what `body` returns.
    /// - Throws: ``BLEError/authenticationFailed(_:dbusError:message:)`` (AuthenticationFailed:
    ///   a wrong passkey; AuthenticationRejected, AuthenticationCanceled, AuthenticationTimeout),
    ///   ``BLEError/busy(_:dbusError:message:)`` (InProgress: another Pair of the device runs),
    ///   ``BLEError/failed(_:dbusError:message:)`` (ConnectionAttemptFailed, Failed),
    ///   ``BLEError/disconnected(_:)`` (the device object went away), ``BLEError/timedOut(_:)``
    ///   (operation `pair`), ``BLEError/unavailable(_:)``, the errors of
    ///   ``Session/withAgent(_:timeout:isolation:_:)``, `CancellationError`, what `body` throws.
    public func withPairing<T: Sendable>(
        agent: Agent?, timeout: Duration, disconnectTimeout: Duration = .seconds(4),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PairingOutcome) async throws -> T
    ) async throws -> T {
        if pairingState?.paired == true { return try await body(.alreadyPaired) }
        var wasConnected = isConnected
        // Set when the cache shows the link down while Pair is pending: a link up after that
        // is one Pair brought up, however the Pair ends.
        let linkWentDown = Lock(false)
        let deadline = ContinuousClock.now + timeout
        var pairSent = false
        let result: Result<T, any Error>
        do {
            result = .success(try await session.withAgent(ifAny: agent, timeout: timeout) {
                pairSent = true
                var outcome: PairingOutcome
                do {
                    outcome = try await pair(timeout: deadline - .now) { linkWentDown.withLock { $0 = true } }
                } catch let error as BLEError where wasConnected && !Task.isCancelled && Self.mayBeLinkLoss(error) && !isConnected {
                    // The link we found was on its way down (bluetoothd keeps it up for its 2 s
                    // disconnect timer after the command before sent Disconnect) and its loss
                    // ended the bonding: once Connected is false, Pair again, on a link Pair
                    // brings up, which is then ours to disconnect.
                    try await waitUntilDisconnected(timeout: deadline - .now, operation: operation(.pair))
                    wasConnected = false
                    outcome = try await pair(timeout: deadline - .now)
                }
                if outcome == .alreadyPaired { pairSent = false }
                return try await body(outcome)
            })
        } catch {
            result = .failure(error)
            // Busy: another program's pairing holds the device, and the link is its own.
            if case BLEError.busy = error { pairSent = false }
        }
        if pairSent && (!wasConnected || linkWentDown.withLock({ $0 })) {
            let succeeded = (try? result.get()) != nil && !Task.isCancelled
            await disconnectAsCleanup(waitingUpTo: Self.disconnectWait(disconnectTimeout, succeeded: succeeded))
        }
        return try result.get()
    }

    /// Whether Pair failed as bluetoothd fails a bonding whose link went down
    /// (AuthenticationCanceled, AuthenticationFailed, ConnectionAttemptFailed, Failed).
    static func mayBeLinkLoss(_ error: BLEError) -> Bool {
        switch error {
        case .authenticationFailed, .failed, .disconnected: true
        default: false
        }
    }

    /// Device1.Pair; on timeout or cancellation, CancelPairing.
    /// - Parameter linkDown: called (under the session's lock: it must only note it) each time
    ///   the cache shows the device not connected while the Pair is pending, from when the
    ///   call is made until its answer, in the order bluetoothd sent its signals and answer.
    /// - Returns: ``PairingOutcome/alreadyPaired`` when BlueZ answers AlreadyExists.
    func pair(timeout: Duration, linkDown: (@Sendable () -> Void)? = nil) async throws -> PairingOutcome {
        let path = path
        let operation = operation(.pair)
        do {
            _ = try await session.call(BlueZ.call(path, BlueZ.deviceInterface, "Pair"), operation: operation,
                                       timeout: timeout) { cache, _ in
                guard let device = cache[path, BlueZ.deviceInterface] else { return BLEError.disconnected(operation) }
                if device["Connected"]?.bool != true { linkDown?() }
                return nil
            }
            return .paired
        } catch BLEError.failed(_, BlueZ.Error.alreadyExists, _) {
            return .alreadyPaired
        } catch {
            if Session.mayHaveBeenCarriedOut(despite: error) {
                await session.cleanupCall(BlueZ.call(path, BlueZ.deviceInterface, "CancelPairing"),
                                          waitingUpTo: CleanupPolicy.interruptedTimeout)
            }
            throw error
        }
    }

    /// Removes the device from BlueZ (Adapter1.RemoveDevice): its pairing and stored keys
    /// go with it, and a connected device is disconnected first (BlueZ answers once the link
    /// is down). Follows bluez/doc/org.bluez.Adapter.rst; BlueZ answers DoesNotExist for a
    /// device it does not have.
    /// - Throws: ``BLEError/deviceNotFound(_:)`` (BlueZ has no such device),
    ///   ``BLEError/unavailable(_:)`` (NotReady: the adapter is powered off),
    ///   ``BLEError/failed(_:dbusError:message:)`` (operation `unpair`),
    ///   ``BLEError/timedOut(_:)``, `CancellationError`.
    public func remove(timeout: Duration) async throws {
        let call = BlueZ.call(adapter.path, BlueZ.adapterInterface, "RemoveDevice", [.objectPath(path)])
        do {
            _ = try await session.call(call, operation: operation(.unpair), timeout: timeout)
        } catch BLEError.failed(_, let name, _) where [BlueZ.Error.doesNotExist, DBusErrorName.unknownObject].contains(name) {
            throw BLEError.deviceNotFound(address)
        }
    }
}
