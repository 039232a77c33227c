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
    /// A watcher sees every event, one at a time in bus order, with the cache as it was right
    /// after that event (on the connection's queue, under the session lock), and may return an
    /// action; the actions of one batch of messages run after it, in order, outside the lock.
    /// The first call, at registration, has no event (nil), or the event that ended bluetoothd.
    typealias Watcher = @Sendable (ObjectCache, SessionEvent?) -> (@Sendable () -> Void)?

    /// A watcher and its registration number.
    struct RegisteredWatcher {
        let id: UInt64
        let watcher: Watcher
    }

    struct State {
        var cache = ObjectCache()
        /// The unique name owning org.bluez: only its signals count. nil while unknown or unowned.
        var bluezOwner: String?
        /// The event that ended bluetoothd for us (it left, or the bus is gone), until it returns.
        var ended: SessionEvent?
        /// Watchers in registration order: for one event they run in this order.
        var watchers: [RegisteredWatcher] = []
        var nextID: UInt64 = 0
        /// Values our own ReadValue calls returned, per characteristic, whose Value change
        /// BlueZ has not signalled yet (see ``expectReadMirror(of:at:on:)``).
        var readMirrors: [ObjectPath: [ReadMirror]] = [:]
        /// Signals dropped because they did not come from org.bluez's owner.
        var foreignSignals = 0
    }

    /// A value a ReadValue of ours returned: BlueZ stores it and signals it as a Value change
    /// just after the reply, which is not a notification.
    struct ReadMirror {
        /// The bytes the read returned.
        var value: [UInt8]
        /// Where in the attribute's value they start (the read's offset).
        var offset: Int
        var expires: ContinuousClock.Instant

        /// Whether `signalled` is the value BlueZ stored after this read: after a read from
        /// `offset`, BlueZ keeps the part before it and signals the whole stored value.
        func isEcho(_ signalled: [UInt8]) -> Bool {
            offset == 0 ? signalled == value
                : signalled.count >= offset + value.count && signalled[offset..<offset + value.count].elementsEqual(value)
        }
    }

    /// How long a read's Value change is expected after its reply (BlueZ emits it at once).
    static let readMirrorLifetime: Duration = .seconds(1)

    package let connection: BusConnection
    let state = Lock(State(), outermost: true)
    /// One GATT operation in flight per characteristic.
    let gate = CharacteristicGate()
    /// The discoveries of this session, one per adapter, shared by their users.
    let discoveries = SharedDiscoveries()
    /// The users of each device's link (``Device/withConnection(timeout:disconnectTimeout:isolation:_:)``).
    let linkUsers = LinkUsers()
    /// The Connects waiting for a free link, served in turn.
    let linkTurns = LinkTurns()
    /// Told of the bus traffic, the fate of each signal and the operations begun; usually nil.
    let observer: (any SessionObserver)?

    init(connection: BusConnection, observer: (any SessionObserver)?) {
        self.connection = connection
        self.observer = observer
    }

    /// Connects to the system bus (or the bus at `address`) and loads BlueZ's objects.
    /// - Parameters:
    ///   - address: a D-Bus address; nil: the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured).
    ///   - timeout: the limit for connecting, subscribing and GetManagedObjects.
    ///   - observer: told of every message on the session's connection after `Hello`, of
    ///     what the session makes of each signal, and of the operations it begins
    ///     (``SessionObserver``); nil (the default) for none.
    /// - Throws: ``BLEError/unavailable(_:)`` (no bus, bluetoothd not running),
    ///   ``BLEError/permissionDenied(_:)`` (the bus policy refused GetManagedObjects),
    ///   ``BLEError/timedOut(_:)``, `CancellationError`.
    public static func open(address: String? = nil, timeout: Duration, observer: (any SessionObserver)? = nil) async throws -> Session {
        try await open(Opening(address: address, observer: observer), timeout: timeout)
    }

    /// The session `opening` is making (connected, subscribed and loaded as
    /// ``open(address:timeout:observer:)`` does), once it is ready: at once if it already is.
    /// `timeout` counts from this call. At the timeout or on cancellation the opening is
    /// abandoned: its connection is closed, whatever it had reached. An opening gives its
    /// session once; a later call begins a new one on the same address, with the same observer.
    /// - Throws: as ``open(address:timeout:observer:)``, including a failure that came before
    ///   this call.
    public static func open(_ opening: Opening, timeout: Duration) async throws -> Session {
        let operation = BLEOperation(.bus)
        let opening = opening.claim() ? opening : Opening(address: opening.address, observer: opening.observer)
        do {
            return try await withOneShot(timeout: timeout, timeoutError: { BLEError.timedOut(operation) }) { shot in
                opening.take { result in
                    if !shot.resolve(result), case .success(let late) = result { late.close() }
                }
            }
        } catch {
            opening.abandon()
            throw BLEError.from(error, during: operation)
        }
    }

    static let matchRules: [MatchRule] = [
        MatchRule(sender: BlueZ.service, interface: BlueZ.objectManager, member: StandardNames.interfacesAdded),
        MatchRule(sender: BlueZ.service, interface: BlueZ.objectManager, member: StandardNames.interfacesRemoved),
        MatchRule(sender: BlueZ.service, interface: BlueZ.properties, member: StandardNames.propertiesChanged,
                  pathNamespace: "/org/bluez"),
        MatchRule(sender: busDaemon, interface: busDaemon, member: StandardNames.nameOwnerChanged, arg0: BlueZ.service),
        // bluetoothd 5.83+: why a device's link went down (DisconnectReason), just before Connected=false.
        MatchRule(sender: BlueZ.service, interface: BlueZ.deviceInterface, member: DisconnectReason.member, pathNamespace: "/org/bluez"),
    ]

    /// The bus daemon's name: the sender of its own signals (NameOwnerChanged).
    static let busDaemon = StandardNames.bus

    /// Subscribes and loads, without a task: the match rules, org.bluez's owner, then its
    /// objects, all sent at once; `done` runs once, on the connection's queue, when every reply
    /// has been applied or with the first failure (nothing is cancelled: closing the connection
    /// fails what is still awaited).
    func beginLoad(_ done: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        connection.addSignalHandler(matching: Self.matchRules) { [weak self] messages in
            self?.receive(messages)
        }
        connection.onConnectionLost { [weak self] in self?.end(with: .busLost) }
        // The match rules, org.bluez's owner, then its objects: all on the wire at once, in
        // this order, the replies awaited together (one round trip where there were three).
        // The bus daemon handles a connection's messages in order, so the rules are in force
        // before it answers GetNameOwner and before GetManagedObjects reaches bluetoothd; each
        // reply is applied on the connection's queue as it is delivered, in order with the
        // signals around it, so nothing between them is lost or taken from someone else. The
        // first failure to arrive is the one reported (an AddMatch's, then GetNameOwner's: a
        // missing bluetoothd fails GetNameOwner before GetManagedObjects).
        let calls = Self.matchRules.map { BusConnection.busCall("AddMatch", [.string($0.description)]) }
            + [BusConnection.busCall("GetNameOwner", [.string(BlueZ.service)]), BlueZ.call("/", BlueZ.objectManager, "GetManagedObjects")]
        let ownerCall = calls.count - 2, objectsCall = calls.count - 1
        // Replies still awaited; nil once `done` has run.
        let left = Lock<Int?>(calls.count)
        for (index, call) in calls.enumerated() {
            connection.send(call) { [weak self] result in
                let reply: Message
                switch result {
                case .failure(let error):
                    if left.withLock({ left in defer { left = nil }; return left != nil }) { done(.failure(Self.loadFailure(error))) }
                    return
                case .success(let message):
                    reply = message
                }
                if index == ownerCall {
                    self?.withEvents { state, _ in
                        if let name = reply.body.first?.string, state.bluezOwner == nil, state.ended == nil { state.bluezOwner = name }
                    }
                } else if index == objectsCall {
                    self?.withEvents { state, _ in
                        state.cache.load(managedObjectsReply: reply)
                    }
                }
                let finished = left.withLock { left -> Bool in
                    guard let remaining = left else { return false }
                    left = remaining == 1 ? nil : remaining - 1
                    return remaining == 1
                }
                if finished { done(.success(())) }
            }
        }
    }

    /// A failure while loading, as ``open(address:timeout:observer:)`` throws it: no owner of
    /// org.bluez is bluetoothd not running.
    private static func loadFailure(_ error: any Error) -> any Error {
        if case BusError.errorReply(DBusErrorName.nameHasNoOwner, _) = error {
            return BLEError.unavailable(.bluezNotRunning, dbusError: DBusErrorName.nameHasNoOwner)
        }
        return error
    }

    /// Closes the bus connection, without blocking, from anywhere (also from inside a
    /// notification callback or an event handler). Pending calls and waits fail (the bus is
    /// gone: ``BLEError/unavailable(_:)``), later ones fail at once, ``events()`` streams end;
    /// bluetoothd then ends this client's discovery and notification sessions.
    public func close() { connection.close() }

    // MARK: - Signals -> cache -> watchers

    /// Folds the signals of one batch into the cache one at a time, in bus order, running the
    /// watchers after each with that event; signals not from org.bluez's owner are dropped.
    func receive(_ messages: [Message]) {
        var reload = false
        // What became of each signal, for the observer (collected only when there is one).
        var fates: [(Message, SignalFate, ContinuousClock.Instant)]? = observer == nil ? nil : []
        withEvents { state, emit in
            for message in messages {
                if message.member == StandardNames.nameOwnerChanged, message.interface == Self.busDaemon {
                    let body = message.body
                    guard message.sender == Self.busDaemon, body.count >= 3, body[0].string == BlueZ.service,
                          let newOwner = body[2].string else {
                        state.foreignSignals += 1
                        fates?.append((message, .notFromBusDaemon(sender: message.sender), .now))
                        continue
                    }
                    if newOwner.isEmpty {
                        guard state.ended == nil else { fates?.append((message, .unchanged, .now)); continue }
                        fates?.append((message, .applied, .now))
                        state.bluezOwner = nil
                        state.cache.clear()
                        state.readMirrors.removeAll()
                        state.ended = .bluezVanished
                        emit(.bluezVanished, state)
                    } else {
                        fates?.append((message, .applied, .now))
                        state.bluezOwner = newOwner
                        if case .busLost? = state.ended { continue }
                        state.ended = nil
                        reload = true
                        emit(.bluezAppeared(owner: newOwner), state)
                    }
                    continue
                }
                guard let sender = message.sender, sender == state.bluezOwner else {
                    state.foreignSignals += 1
                    fates?.append((message, .notFromBlueZ(sender: message.sender, owner: state.bluezOwner), .now))
                    continue
                }
                guard let applied = state.cache.apply(message) else { fates?.append((message, .unchanged, .now)); continue }
                fates?.append((message, .applied, .now))
                let event = Self.droppingReadMirror(applied, from: &state)
                emit(event, state)
            }
        }
        if let observer, let fates {
            for (message, fate, time) in fates { observer.session(received: message, fate, at: time) }
        }
        if reload { reloadObjects() }
    }

    /// bluetoothd has a new owner: its objects replace the cache (GetManagedObjects, applied
    /// in order with the signals around it), then watchers get ``SessionEvent/loaded``.
    private func reloadObjects() {
        let call = BlueZ.call("/", BlueZ.objectManager, "GetManagedObjects")
        connection.send(call) { [weak self] result in
            guard case .success(let reply) = result else { return }
            self?.withEvents { state, emit in
                guard state.ended == nil, reply.sender == state.bluezOwner else { return }
                state.cache.load(managedObjectsReply: reply)
                emit(.loaded, state)
            }
        }
    }

    /// The bus is gone: the cache is emptied and every watcher gets ``SessionEvent/busLost``.
    private func end(with event: SessionEvent) {
        withEvents { state, emit in
            guard state.ended?.isBusLost != true else { return }
            state.cache.clear()
            state.bluezOwner = nil
            state.readMirrors.removeAll()
            state.ended = event
            emit(event, state)
        }
    }

    /// Runs `body` under the lock with an `emit` that runs every watcher (in registration
    /// order) on the event and the cache as it is at that moment; then runs the watchers'
    /// actions, in order, outside the lock.
    private func withEvents(_ body: (inout State, inout Emitted) -> Void) {
        var emitted = Emitted()
        state.withLock { state in body(&state, &emitted) }
        for action in emitted.actions { action() }
    }

    /// The watchers' actions collected while events are emitted under the lock.
    struct Emitted {
        var actions: [@Sendable () -> Void] = []

        /// Runs every watcher on `event` and the cache as it is now (in `state`).
        mutating func callAsFunction(_ event: SessionEvent, _ state: State) {
            for entry in state.watchers {
                if let action = entry.watcher(state.cache, event) { actions.append(action) }
            }
        }
    }

    // MARK: - Our own reads are not notifications

    /// Notes that this session's ReadValue on `path`, from `offset`, returned `value`.
    ///
    /// BlueZ answers ReadValue, stores the value and then signals it as a PropertiesChanged
    /// of Value (bluez/src/gatt-client.c chrc_read_cb), exactly as it signals a notification.
    /// The next Value change on `path` that is this value (within ``readMirrorLifetime``; after
    /// a read from an offset, a stored value holding `value` at `offset`) is therefore not
    /// reported as a changed Value (the cache keeps no characteristic's Value), so no watcher
    /// takes it for a notification (Chromium's BlueZ backend does the same with a count of
    /// reads in flight).
    /// Call it from the reply handler, on the connection's queue, so it is in place before
    /// the signal that follows the reply is folded.
    func expectReadMirror(of value: [UInt8], at offset: UInt16 = 0, on path: ObjectPath) {
        let expires = ContinuousClock.now + Self.readMirrorLifetime
        state.withLock { $0.readMirrors[path, default: []].append(ReadMirror(value: value, offset: Int(offset), expires: expires)) }
    }

    /// `event` without its Value when the value it carries is the echo of one of our reads.
    private static func droppingReadMirror(_ event: SessionEvent, from state: inout State) -> SessionEvent {
        // No read of ours awaits its echo (always, in a notification stream): nothing to look up.
        guard !state.readMirrors.isEmpty,
              case .changed(let path, BlueZ.gattCharacteristicInterface, var changed, let invalidated) = event,
              let value = changed["Value"]?.bytes, var mirrors = state.readMirrors[path] else { return event }
        let now = ContinuousClock.now
        mirrors.removeAll { $0.expires < now }
        let echo = mirrors.firstIndex { $0.isEcho(value) }
        if let echo { mirrors.remove(at: echo) }
        state.readMirrors[path] = mirrors.isEmpty ? nil : mirrors
        guard echo != nil else { return event }
        changed["Value"] = nil
        return .changed(path, interface: BlueZ.gattCharacteristicInterface, changed: changed, invalidated: invalidated)
    }

    // MARK: - Watchers

    /// Registers `watcher` and runs it once at once on the current cache (with no event, or
    /// the event that ended bluetoothd), under the same lock, so nothing can slip between
    /// the check and the registration.
    func addWatcher(_ watcher: @escaping Watcher) -> UInt64 {
        let (id, action) = state.withLock { state -> (UInt64, (@Sendable () -> Void)?) in
            state.nextID += 1
            state.watchers.append(RegisteredWatcher(id: state.nextID, watcher: watcher))
            return (state.nextID, watcher(state.cache, state.ended))
        }
        action?()
        return id
    }

    func removeWatcher(_ id: UInt64) {
        state.withLock { $0.watchers.removeAll { $0.id == id } }
    }

    /// Watchers currently registered (for tests: nothing may be left after an operation).
    package var watcherCount: Int { state.withLock { $0.watchers.count } }

    /// Signals dropped because they did not come from org.bluez's current owner.
    package var foreignSignalCount: Int { state.withLock { $0.foreignSignals } }

    /// A consistent read of the cache.
    public func withCache<T>(_ body: (ObjectCache) throws -> T) rethrows -> T {
        try state.withLock { try body($0.cache) }
    }

    /// The unique bus name (`":1.3"`) of org.bluez's current owner, bluetoothd, as this session
    /// tracks it: GetNameOwner when it opened, then NameOwnerChanged, in order with the
    /// signals. Only signals from this name are believed. Nil while bluetoothd is off the bus.
    public var bluezOwner: String? { state.withLock { $0.bluezOwner } }

    /// The executor events are produced on: the session's connection queue, where signals are
    /// folded into the cache and watchers run. A task that consumes a stream of this session
    /// (``Adapter/withDiscovery(filter:setupTimeout:isolation:_:)``'s advertisements, a
    /// notification subscription's events) under `withTaskExecutorPreference(session.eventExecutor)`
    /// takes each batch on the thread that received it, without a thread hand-off per batch.
    /// Work run there must not block: it holds up every message behind it (an `await` frees it).
    /// A dense stream of signals arriving a few at a time is read every 0.5 ms instead of once
    /// per signal (DBusKit's `BusConnection`), so a batch may come up to 0.5 ms after its first
    /// signal arrived; replies to this session's calls are never held back.
    public var eventExecutor: any TaskExecutor { connection.taskExecutor }

    /// Whether bluetoothd is on the bus (as far as this session has seen).
    public var isBlueZAvailable: Bool { state.withLock { $0.ended == nil } }
}

extension SessionEvent {
    var isBusLost: Bool { if case .busLost = self { true } else { false } }
}
