import DBusKit

/// A pairing passkey: the six-digit number (0 to 999999) a device displays and the host
/// types, or the other way round (Bluetooth Core, Vol 3 Part H 2.3.5.3, Passkey Entry).
public struct Passkey: Sendable, Hashable, CustomStringConvertible {
    /// 0 to 999999.
    public let value: UInt32

    /// nil when `value` is above 999999.
    public init?(_ value: UInt32) {
        guard value <= Self.maximum else { return nil }
        self.value = value
    }

    /// The largest passkey, 999999.
    public static let maximum: UInt32 = 999_999

    /// Six digits, zero-padded, as devices display it (`000042`).
    public var description: String {
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }
}

/// An org.bluez.Agent1 of this process's own (bluez/doc/org.bluez.Agent.rst): the object
/// bluetoothd asks during a pairing ("type the passkey", "confirm Just Works").
///
/// It cannot show anything to anyone nor ask anyone: its IO capability is
/// `NoInputNoOutput`, or `KeyboardOnly` when it knows the passkey to type. Its answers:
/// - `RequestPasskey`: the ``passkey`` when there is one and the device is accepted, else
///   `org.bluez.Error.Rejected`.
/// - `RequestAuthorization` (Just Works pairing the device started): accepted for accepted
///   devices, else Rejected.
/// - `RequestConfirmation` (numeric comparison: nobody can compare), `RequestPinCode`
///   (BR/EDR legacy pairing), `AuthorizeService` (an incoming profile connection):
///   Rejected, as bluetoothd decides when no agent is registered.
/// - `DisplayPasskey`, `DisplayPinCode`, `Cancel`, `Release`: an empty return.
/// - Calls whose sender is not org.bluez's current unique owner (as tracked by the session,
///   in order with its signals): Rejected, whatever the method. Anyone on the bus may call
///   an exported object; only bluetoothd may ask this one for a passkey.
/// - Other members or signatures: `org.freedesktop.DBus.Error.UnknownMethod`.
///
/// bluetoothd calls an agent's methods only (bluez/src/agent.c), never Introspect, so the
/// object answers no other interface. Register it with ``Session/withAgent(_:timeout:isolation:_:)``.
public final class Agent: Sendable {
    /// The IO capability given to AgentManager1.RegisterAgent.
    public enum Capability: String, Sendable {
        /// No way to show or enter anything: Just Works pairing only.
        case noInputNoOutput = "NoInputNoOutput"
        /// Can enter a passkey (the one the device displays).
        case keyboardOnly = "KeyboardOnly"
    }

    /// One call bluetoothd (or someone else) made to the agent, and how it was answered.
    public struct Request: Sendable, Equatable {
        /// The Agent1 method (`RequestPasskey`).
        public var method: String
        /// The device concerned, for the methods that name one.
        public var device: ObjectPath?
        /// The caller's unique bus name.
        public var sender: String?
        /// Whether it got a method return (false: an error reply).
        public var accepted: Bool
    }

    /// Where the agent is exported (`/org/blectl/agent`); one per bus connection is enough:
    /// BlueZ keeps one agent per client.
    public let path: ObjectPath
    /// The passkey typed when bluetoothd asks for one; nil: none (and capability NoInputNoOutput).
    public let passkey: Passkey?
    /// The devices whose requests are accepted; nil: any device.
    public let devices: Set<ObjectPath>?
    private let log = Lock<[Request]>([])
    private let releasedFlag = Lock(false)

    /// - Parameters:
    ///   - path: the object path to export it at (default `/org/blectl/agent`).
    ///   - passkey: what to answer RequestPasskey; nil registers `NoInputNoOutput`.
    ///   - devices: the device object paths whose requests are accepted; nil: any device.
    ///     An agent may become bluetoothd's default agent (see ``Session/withAgent(_:timeout:isolation:_:)``)
    ///     and then hears about other devices' pairings: name the device being paired.
    public init(path: ObjectPath = "/org/blectl/agent", passkey: Passkey? = nil, devices: Set<ObjectPath>? = nil) {
        self.path = path
        self.passkey = passkey
        self.devices = devices
    }

    /// `KeyboardOnly` with a passkey, else `NoInputNoOutput`.
    public var capability: Capability { passkey == nil ? .noInputNoOutput : .keyboardOnly }

    /// The calls received so far, in order.
    public var requests: [Request] { log.withLock { $0 } }

    /// Whether bluetoothd sent Release (it unregistered the agent itself, as when it stops).
    public var isReleased: Bool { releasedFlag.withLock { $0 } }

    /// The answer to one method call on the agent's path. `bluezOwner` is org.bluez's current
    /// unique owner (nil when nobody owns it).
    func answer(_ call: Message, bluezOwner: String?) -> MethodReply {
        let member = call.member ?? ""
        let device = call.body.first?.objectPath
        let reply = reply(to: call, member: member, device: device, bluezOwner: bluezOwner)
        if case .values = reply, member == "Release", call.sender == bluezOwner { releasedFlag.withLock { $0 = true } }
        let accepted = if case .values = reply { true } else { false }
        log.withLock { $0.append(Request(method: member, device: device, sender: call.sender, accepted: accepted)) }
        return reply
    }

    private func reply(to call: Message, member: String, device: ObjectPath?, bluezOwner: String?) -> MethodReply {
        guard let sender = call.sender, sender == bluezOwner else {
            return .error(name: BlueZ.Error.rejected, message: "only org.bluez may call this agent")
        }
        guard call.interface == nil || call.interface == BlueZ.agentInterface else {
            return .error(name: DBusErrorName.unknownMethod, message: "no interface \(call.interface ?? "") on \(path)")
        }
        let accepts = device.map { devices?.contains($0) ?? true } ?? false
        let refused = MethodReply.error(name: BlueZ.Error.rejected, message: "rejected by blectl's agent")
        switch (member, call.signature) {
        case ("RequestPasskey", "o"):
            guard accepts, let passkey else { return refused }
            return .values([.uint32(passkey.value)])
        case ("RequestAuthorization", "o"):
            return accepts ? .values([]) : refused
        case ("RequestConfirmation", "ou"), ("RequestPinCode", "o"), ("AuthorizeService", "os"):
            return refused
        case ("DisplayPasskey", "ouq"), ("DisplayPinCode", "os"), ("Cancel", ""), ("Release", ""):
            return .values([])
        default:
            return .error(name: DBusErrorName.unknownMethod,
                          message: "no method \(member) with signature \"\(call.signature)\" on \(BlueZ.agentInterface)")
        }
    }
}

extension Session {
    /// How long clean-up waits for UnregisterAgent's reply after a body that ended normally
    /// (bluetoothd answers at once); after a failure or an interruption,
    /// ``CleanupPolicy/interruptedTimeout``.
    public static let agentUnregisterTimeout: Duration = .seconds(2)

    /// Exports `agent`, registers it with bluetoothd (AgentManager1.RegisterAgent with its
    /// capability), runs `body`, then unregisters it (UnregisterAgent) and stops exporting it,
    /// also when `body` throws or the task is cancelled (UnregisterAgent is sent anyway).
    ///
    /// The agent is not made the default one (no RequestDefaultAgent): bluetoothd asks the
    /// agent of the client that called Device1.Pair for that pairing (bluez/src/device.c
    /// pair_device, `agent_get(sender)`), so a command line tool need not take the system's
    /// default agent away. bluetoothd does make it the default while it is registered when
    /// there is no default agent at all (bluez/src/agent.c agent_create); bluetoothd drops it
    /// when this connection leaves the bus. Follows bluez/doc/org.bluez.AgentManager.rst.
    /// - Parameters:
    ///   - timeout: the limit for RegisterAgent.
    /// - Returns: what `body` returns.
    /// - Throws: ``BLEError/failed(_:dbusError:message:)`` (operation `agent`:
    ///   `org.bluez.Error.AlreadyExists` when this connection has an agent registered
    ///   already, `InvalidArguments`), ``BLEError/permissionDenied(_:)``,
    ///   ``BLEError/timedOut(_:)``, ``BLEError/unavailable(_:)``, `CancellationError`, what
    ///   `body` throws. Clean-up failures are not thrown.
    public func withAgent<T: Sendable>(
        _ agent: Agent, timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Agent) async throws -> T
    ) async throws -> T {
        let operation = BLEOperation(.agent)
        let token = connection.export(agent.path) { [weak self] call in
            agent.answer(call, bluezOwner: self?.bluezOwner)
        }
        let register = BlueZ.call(BlueZ.agentManagerPath, BlueZ.agentManagerInterface, "RegisterAgent",
                                  [.objectPath(agent.path), .string(agent.capability.rawValue)])
        do {
            _ = try await call(register, operation: operation, timeout: timeout)
        } catch {
            // A RegisterAgent given up on (timeout, cancellation) may still be carried out.
            if Self.mayHaveBeenCarriedOut(despite: error) {
                await cleanupCall(unregisterCall(agent), waitingUpTo: CleanupPolicy.interruptedTimeout)
            }
            connection.unexport(token)
            throw error
        }
        let result: Result<T, any Error>
        do { result = .success(try await body(agent)) } catch { result = .failure(error) }
        let succeeded = (try? result.get()) != nil && !Task.isCancelled
        await cleanupCall(unregisterCall(agent), waitingUpTo: succeeded ? Self.agentUnregisterTimeout : CleanupPolicy.interruptedTimeout)
        connection.unexport(token)
        return try result.get()
    }

    /// ``withAgent(_:timeout:isolation:_:)`` when `agent` is given, else just `body`.
    func withAgent<T: Sendable>(
        ifAny agent: Agent?, timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async throws -> T {
        guard let agent else { return try await body() }
        return try await withAgent(agent, timeout: timeout) { _ in try await body() }
    }

    private func unregisterCall(_ agent: Agent) -> MethodCall {
        BlueZ.call(BlueZ.agentManagerPath, BlueZ.agentManagerInterface, "UnregisterAgent", [.objectPath(agent.path)])
    }

    /// Sends `call` even when the task is cancelled, and waits for its reply up to `limit`
    /// (cut to the ``CommandDeadline``) or until the task is cancelled; in every case the
    /// call is on the wire on return. For clean-up: the reply, an error, or nil (no reply in
    /// time); never throws.
    @discardableResult
    func cleanupCall(_ call: MethodCall, waitingUpTo limit: Duration) async -> Result<Message, BusError>? {
        let outcome = Lock<Result<Message, BusError>?>(nil)
        let replied = OneShot<Void>()
        // Enqueued now, whatever the state of this task.
        let pending = connection.send(call) { result in
            outcome.withLock { $0 = result }
            replied.succeed(())
        }
        let budget = CleanupPolicy.budget(limit)
        if budget > .zero {
            _ = try? await withOneShot(timeout: budget) { (wait: OneShot<Void>) in replied.onFinish { wait.succeed(()) } }
        }
        await connection.flush(within: max(CleanupPolicy.budget(CleanupPolicy.interruptedTimeout), CleanupPolicy.wireTime))
        pending.cancel()
        return outcome.withLock { $0 }
    }

    /// Whether a call that failed with `error` may still have been carried out by bluetoothd:
    /// given up on before its reply (timed out, cancelled).
    static func mayHaveBeenCarriedOut(despite error: any Error) -> Bool {
        switch error {
        case is CancellationError: true
        case BLEError.timedOut: true
        default: false
        }
    }
}
