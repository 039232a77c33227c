import DBusKit
import Synchronization

/// One connection to bluetoothd: the object cache, kept current by signals, and the watchers
/// that wait on it.
///
/// ``open(timeout:)`` adds the match rules (InterfacesAdded, InterfacesRemoved,
/// PropertiesChanged from org.bluez, NameOwnerChanged of org.bluez) *before* GetManagedObjects,
/// so nothing happening in between is missed. Signals are folded into the cache on the
/// connection's queue, in arrival order and before any later reply is delivered, so a reply
/// (Connect) is never seen before the signals that preceded it (Connected=true).
public final class Session: Sendable {
    /// A watcher sees the cache after each batch of changes (on the connection's queue, under
    /// the session lock) and may return an action to run outside the lock.
    typealias Watcher = @Sendable (ObjectCache, [CacheChange]) -> (@Sendable () -> Void)?

    struct State {
        var cache = ObjectCache()
        var bluezAvailable = true
        var watchers: [UInt64: Watcher] = [:]
        var nextID: UInt64 = 0
        /// Values our own ReadValue calls returned, per characteristic, whose Value change
        /// BlueZ has not signalled yet (see ``expectReadMirror(of:on:)``).
        var readMirrors: [ObjectPath: [ReadMirror]] = [:]
    }

    /// A value a ReadValue of ours returned: BlueZ stores it and signals it as a Value change
    /// just after the reply, which is not a notification.
    struct ReadMirror {
        var value: [UInt8]
        var expires: ContinuousClock.Instant
    }

    /// How long a read's Value change is expected after its reply (BlueZ emits it at once).
    static let readMirrorLifetime: Duration = .seconds(1)

    public let connection: BusConnection
    let state = Lock(State())
    /// One GATT operation in flight per characteristic.
    let gate = CharacteristicGate()

    private init(connection: BusConnection) { self.connection = connection }

    /// Connects to the system bus (or the bus at `address`) and loads BlueZ's objects.
    /// - Parameters:
    ///   - address: a D-Bus address; nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured).
    ///   - timeout: the limit for connecting, subscribing and GetManagedObjects.
    /// - Throws: ``BLEError/unavailable(_:)`` (no bus, bluetoothd not running),
    ///   ``BLEError/permissionDenied(_:)`` (the bus policy refused GetManagedObjects),
    ///   ``BLEError/timedOut(_:)``, `CancellationError`.
    public static func open(address: String? = nil, timeout: Duration) async throws -> Session {
        let operation = BLEOperation(.bus)
        let connection: BusConnection
        do {
            connection = try await withOneShot(timeout: timeout, timeoutError: { BLEError.timedOut(operation) }) { shot in
                Task {
                    do { shot.succeed(try await BusConnection.connect(to: address ?? BusConnection.systemBusAddress)) } catch { shot.fail(error) }
                }
            }
        } catch {
            throw BLEError.from(error, during: operation)
        }
        let session = Session(connection: connection)
        do {
            try await session.load(timeout: timeout)
        } catch {
            connection.close()
            throw BLEError.from(error, during: operation)
        }
        return session
    }

    static let matchRules: [MatchRule] = [
        MatchRule(sender: BlueZ.service, interface: BlueZ.objectManager, member: "InterfacesAdded"),
        MatchRule(sender: BlueZ.service, interface: BlueZ.objectManager, member: "InterfacesRemoved"),
        MatchRule(sender: BlueZ.service, interface: BlueZ.properties, member: "PropertiesChanged", pathNamespace: "/org/bluez"),
        MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: BlueZ.service),
    ]

    private func load(timeout: Duration) async throws {
        _ = connection.addSignalHandler(matching: Self.matchRules) { [weak self] messages in
            self?.receive(messages)
        }
        _ = connection.onConnectionLost { [weak self] in self?.publish([.busLost], clear: true) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for rule in Self.matchRules {
                group.addTask { [connection] in try await connection.addMatch(rule, timeout: timeout) }
            }
            try await group.waitForAll()
        }
        guard try await connection.nameOwner(of: BlueZ.service, timeout: timeout) != nil else {
            throw BLEError.unavailable(.bluezNotRunning)
        }
        // Apply the snapshot on the queue, in order with the signals around it.
        let call = BlueZ.call("/", BlueZ.objectManager, "GetManagedObjects")
        try await withOneShot(timeout: timeout) { (shot: OneShot<Void>) in
            let pending = connection.send(call) { [weak self] result in
                switch result {
                case .success(let reply):
                    self?.state.withLock { $0.cache.load(managedObjects: reply.body.first ?? .array(elementSignature: "y", [])) }
                    shot.succeed(())
                case .failure(let error):
                    shot.fail(error)
                }
            }
            shot.onFinish { pending.cancel() }
        }
    }

    /// Closes the bus connection. Pending calls fail; bluetoothd then ends this client's
    /// discovery and notification sessions.
    public func close() { connection.close() }

    // MARK: - Signals -> cache -> watchers

    private func receive(_ messages: [Message]) {
        var changes = [CacheChange]()
        var vanished = false
        state.withLock { state in
            for message in messages {
                if message.member == "NameOwnerChanged" {
                    if message.body.count >= 3, message.body[2].string == "" {
                        vanished = true
                    } else if message.body.count >= 3, message.body[2].string?.isEmpty == false {
                        state.bluezAvailable = true
                    }
                    continue
                }
                if let change = state.cache.apply(message) { changes.append(Self.droppingReadMirror(change, from: &state)) }
            }
        }
        if !changes.isEmpty { publish(changes, clear: false) }
        if vanished { publish([.bluezVanished], clear: true) }
    }

    // MARK: - Our own reads are not notifications

    /// Notes that this session's ReadValue on `path` returned `value`.
    ///
    /// BlueZ answers ReadValue, stores the value and then signals it as a PropertiesChanged
    /// of Value (bluez/src/gatt-client.c), exactly as it signals a notification. The next Value
    /// change on `path` equal to `value` (within ``readMirrorLifetime``) is therefore folded
    /// into the cache but not reported as a changed Value, so no watcher takes it for a
    /// notification (Chromium's BlueZ backend does the same with a count of reads in flight).
    /// Call it from the reply handler, on the connection's queue, so it is in place before
    /// the signal that follows the reply is folded.
    func expectReadMirror(of value: [UInt8], on path: ObjectPath) {
        let expires = ContinuousClock.now + Self.readMirrorLifetime
        state.withLock { $0.readMirrors[path, default: []].append(ReadMirror(value: value, expires: expires)) }
    }

    /// `change` without its Value when it is the echo of one of our reads.
    private static func droppingReadMirror(_ change: CacheChange, from state: inout State) -> CacheChange {
        guard case .changed(let path, BlueZ.gattCharacteristicInterface, let changed, let invalidated) = change,
              changed.contains("Value"), var mirrors = state.readMirrors[path] else { return change }
        let now = ContinuousClock.now
        mirrors.removeAll { $0.expires < now }
        let value = state.cache.property("Value", of: path, on: BlueZ.gattCharacteristicInterface)?.bytes
        var echoed = false
        if let value, let index = mirrors.firstIndex(where: { $0.value == value }) {
            mirrors.remove(at: index)
            echoed = true
        }
        state.readMirrors[path] = mirrors.isEmpty ? nil : mirrors
        guard echoed else { return change }
        return .changed(path, interface: BlueZ.gattCharacteristicInterface, changed: changed.filter { $0 != "Value" },
                        invalidated: invalidated)
    }

    private func publish(_ changes: [CacheChange], clear: Bool) {
        let actions: [@Sendable () -> Void] = state.withLock { state in
            if clear {
                state.cache.clear()
                state.bluezAvailable = false
            }
            return state.watchers.values.compactMap { $0(state.cache, changes) }
        }
        for action in actions { action() }
    }

    // MARK: - Watchers

    /// Registers `watcher` and runs it once at once on the current cache with no changes,
    /// under the same lock (so nothing can slip between the check and the registration).
    func addWatcher(_ watcher: @escaping Watcher) -> UInt64 {
        let (id, action) = state.withLock { state -> (UInt64, (@Sendable () -> Void)?) in
            state.nextID += 1
            state.watchers[state.nextID] = watcher
            let changes: [CacheChange] = state.bluezAvailable ? [] : [.bluezVanished]
            return (state.nextID, watcher(state.cache, changes))
        }
        action?()
        return id
    }

    func removeWatcher(_ id: UInt64) {
        _ = state.withLock { $0.watchers.removeValue(forKey: id) }
    }

    /// Watchers currently registered (for tests: nothing may be left after an operation).
    package var watcherCount: Int { state.withLock { $0.watchers.count } }

    /// A consistent read of the cache.
    public func withCache<T>(_ body: (ObjectCache) throws -> T) rethrows -> T {
        try state.withLock { try body($0.cache) }
    }
}
