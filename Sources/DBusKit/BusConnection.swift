import Dispatch
import Synchronization
internal import CDBus

/// A private connection to a D-Bus bus, driven by libdbus on one serial Dispatch queue.
///
/// Every libdbus call happens on ``queue``: incoming messages are dispatched on it, and reply
/// handlers and signal handlers run on it in the order the messages arrived. A signal handler
/// therefore always sees a signal before any reply that arrived after it. No Swift
/// concurrency thread ever blocks in libdbus.
///
/// The socket is read by a thread of the connection's own (`blectl-dbus-rd`), which waits in
/// poll(2) and then enters ``queue`` synchronously: the read, the dispatch, the handlers and
/// the tasks they resume on ``taskExecutor`` run on that thread, with no hand-off per message.
/// libdbus's write watch and timeouts are Dispatch sources on ``queue``.
///
/// A dense stream of signals that arrive a few at a time is read in batches: after reading a
/// few signals that came within 0.5 ms of the last read, the reading thread sleeps 0.5 ms
/// before it reads again (while no call of this connection awaits its reply: a call sent
/// meanwhile wakes it), so a signal in such a stream may reach its handler up to 0.5 ms
/// (and the timer's slack) later than it could. Replies, signals that come apart and streams
/// that fill their reads (a backlog, a burst) are not held back, and a read that brought a
/// method call for an exported object (bluetoothd asking an agent) is not followed by a sleep.
///
/// This is the one `@unchecked Sendable` type of the library: its mutable state is confined
/// to ``queue``.
public final class BusConnection: @unchecked Sendable {
    /// The queue every libdbus call, reply handler and signal handler runs on.
    package let queue: DispatchQueue
    /// Runs the jobs of tasks that prefer it (`withTaskExecutorPreference`) on ``queue``: a
    /// task consuming what signal handlers produce is resumed on the thread that received the
    /// signal, with no hand-off to the cooperative pool. Its work must not block (it holds up
    /// every message behind it); an `await` frees the queue.
    public var taskExecutor: any TaskExecutor { executor }
    let executor: QueueTaskExecutor
    /// The unique bus name the daemon gave this connection (`:1.42`).
    public let uniqueName: String
    /// Whether this connection can pass Unix file descriptors (the D-Bus type `h`): only a
    /// bus on a Unix socket can, once both ends agreed to it during authentication
    /// (`dbus_connection_can_send_type`). A `tcp:` bus cannot; a reply that would carry one
    /// then never arrives.
    public let canPassUnixFileDescriptors: Bool
    /// Told of every message sent and received; nil (the usual case) costs one check per message.
    let observer: (any BusObserver)?

    // All of the following are confined to `queue`, unless they say otherwise. The parts of
    // the connection, each a type of its own: the signal routes (SignalRouter), the send
    // counts flush(within:) reads (SendTracker), libdbus's watches and timeouts
    // (MainLoopSources), the exported objects (ExportedObjects). The calls are in
    // BusConnection+Calls.swift, the dispatch of what is received in BusConnection+Dispatch.swift.
    let raw: OpaquePointer
    /// False once the connection is closed by us or lost: every new call then fails at once.
    var isOpen = true
    /// Whether libdbus's side has been torn down (after ``isOpen`` went false).
    var tornDown = false
    /// The reply handlers of the calls in flight, by the serial of the call.
    var replyHandlers: [UInt32: @Sendable (Result<Message, BusError>) -> Void] = [:]
    /// The calls awaiting replies, counted from any thread for the read thread (``ReplyWatch``).
    let replies = ReplyWatch()
    /// When each call awaiting its reply was sent; kept only for an ``observer``.
    var callTimes: [UInt32: ContinuousClock.Instant] = [:]
    let router = SignalRouter()
    /// Connection-lost handlers in registration order.
    private var lostHandlers: [(id: UInt64, handler: @Sendable () -> Void)] = []
    /// Counted from any thread (see there).
    let sends = SendTracker()
    /// Takes effect from any thread (see there).
    let exported = ExportedObjects()
    let mainLoop: MainLoopSources
    /// True during a ``ReadPoller`` turn: a drain then runs within the turn, on its thread.
    var inPollTurn = false
    var drainWanted = false
    var drainScheduled = false
    /// What the current (between turns: the last) ``ReadPoller`` turn dispatched.
    var thisTurn = ReadPoller.Turn(signals: 0, callsReceived: 0)
    /// Whether a ``ReadPoller`` turn has run (tests read ``lastPollTurn``).
    var turnsRun = false
    /// Handler tokens, handed out from any thread without touching the queue.
    let nextToken = Atomic<UInt64>(0)
    /// Marks ``queue`` so that calls made on it (from a handler) are recognised.
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// How long the reading thread waits before reading again in a dense signal stream (see
    /// the type's comment and BENCHMARKS.md).
    static let coalescingWindow: Duration = .microseconds(500)

    /// The default system bus address when `DBUS_SYSTEM_BUS_ADDRESS` is not set (D-Bus specification).
    public static let defaultSystemBusAddress = "unix:path=/var/run/dbus/system_bus_socket"

    /// The system bus address as libdbus finds it: `DBUS_SYSTEM_BUS_ADDRESS`, else the default.
    public static var systemBusAddress: String {
        if let env = getenv("DBUS_SYSTEM_BUS_ADDRESS"), env.pointee != 0 { return String(cString: env) }
        return defaultSystemBusAddress
    }

    /// Connects to the system bus (honouring `DBUS_SYSTEM_BUS_ADDRESS`) and registers with the daemon.
    /// - Parameter observer: told of every message sent and received from then on
    ///   (``BusObserver``); nil for none.
    /// - Throws: ``BusError/connectionFailed(name:message:)`` when the bus cannot be reached or
    ///   refuses us.
    public static func system(observer: (any BusObserver)? = nil) async throws -> BusConnection {
        try await connect(to: systemBusAddress, observer: observer)
    }

    /// Connects to the bus at `address` (`unix:path=...`, `tcp:host=...,port=...`) and
    /// registers with the daemon (`Hello`). The blocking connect runs on the connection's own
    /// queue, not on a concurrency thread.
    /// - Parameter observer: told of every message sent and received after `Hello`
    ///   (``BusObserver``); nil for none.
    /// - Throws: ``BusError/connectionFailed(name:message:)`` when the bus cannot be reached or
    ///   refuses us.
    public static func connect(to address: String, observer: (any BusObserver)? = nil) async throws -> BusConnection {
        // The connection's queue takes this before resuming, the task after: ordered (Lock.synchronize).
        let handOff = Lock(())
        let opened = try await withCheckedThrowingContinuation { continuation in
            startConnecting(to: address) { result in
                handOff.synchronize()
                continuation.resume(with: result)
            }
        }
        handOff.synchronize()
        return opened.connection(address: address, observer: observer)
    }

    /// What ``startConnecting(to:completion:)`` calls with the registered connection or the failure.
    package typealias OpenedHandler = @Sendable (Result<Opened, any Error>) -> Void

    /// A connection registered with the daemon (`Hello` answered) that no ``BusConnection``
    /// serves yet: ``connection(address:observer:first:)`` makes one, ``abandon()`` closes it.
    package struct Opened: Sendable {
        fileprivate let raw: UncheckedBox<OpaquePointer>
        fileprivate let uniqueName: String
        fileprivate let canPassUnixFileDescriptors: Bool
        fileprivate let queue: DispatchQueue
        /// When `Hello` was answered: the observer's `.connected` carries this instant, not the
        /// later one at which a caller took the connection.
        fileprivate let registered: ContinuousClock.Instant

        /// The connection, its handlers installed on the queue after what `first` enqueues and
        /// before anything the caller enqueues later.
        ///
        /// Build it on the thread that will share it, or hand it over in a way that orders
        /// that thread after this one (a lock both take: ``Lock/synchronize()``): its fields are
        /// published by the builder.
        /// - Parameter first: runs before the handlers are installed, with the connection:
        ///   the calls it sends go on the wire before the connection starts reading (making its
        ///   read thread), and their replies wait in the socket meanwhile. Nothing is received
        ///   before the handlers are installed, so the signal handlers it adds see every signal.
        package func connection(address: String, observer: (any BusObserver)?,
                                first: (BusConnection) -> Void = { _ in }) -> BusConnection {
            let connection = BusConnection(raw: raw.value, uniqueName: uniqueName, canPassUnixFileDescriptors: canPassUnixFileDescriptors,
                                           queue: queue, observer: observer)
            queue.async { [registered] in
                connection.observer?.observe(.connected(address: address, uniqueName: connection.uniqueName), at: registered)
            }
            first(connection)
            queue.async { connection.installHandlers() }
            return connection
        }

        /// Closes a connection nobody wants any more (it came after the caller's timeout).
        package func abandon() {
            queue.async { [raw] in
                dbus_connection_close(raw.value)
                dbus_connection_unref(raw.value)
            }
        }
    }

    /// ``connect(to:observer:)`` for a caller that races it (``withOneShot(timeout:timeoutError:_:)``)
    /// without a task of its own: the blocking connect and `Hello` run on the connection's own
    /// queue, and `completion` runs once, on that queue, with the registered connection or the
    /// failure. The caller makes the ``BusConnection`` (``Opened/connection(address:observer:first:)``),
    /// or, when it no longer wants it, ``Opened/abandon()``s it.
    package static func startConnecting(to address: String, completion: @escaping OpenedHandler) {
        let queue = DispatchQueue(label: "blectl.dbus")
        queue.async {
            dbus_threads_init_default()
            var error = DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            guard let raw = dbus_connection_open_private(address, &error) else {
                completion(.failure(BusError.connectionFailed(name: Self.name(of: error), message: Self.message(of: error))))
                return
            }
            guard dbus_bus_register(raw, &error) != 0 else {
                let failure = BusError.connectionFailed(name: Self.name(of: error), message: Self.message(of: error))
                dbus_connection_close(raw)
                dbus_connection_unref(raw)
                completion(.failure(failure))
                return
            }
            dbus_connection_set_exit_on_disconnect(raw, 0)
            let uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
            let passesDescriptors = dbus_connection_can_send_type(raw, CDBUS_TYPE_UNIX_FD) != 0
            completion(.success(Opened(raw: UncheckedBox(raw), uniqueName: uniqueName, canPassUnixFileDescriptors: passesDescriptors,
                                       queue: queue, registered: .now)))
        }
    }

    private init(raw: OpaquePointer, uniqueName: String, canPassUnixFileDescriptors: Bool, queue: DispatchQueue,
                 observer: (any BusObserver)?) {
        self.raw = raw
        self.canPassUnixFileDescriptors = canPassUnixFileDescriptors
        self.queue = queue
        self.executor = QueueTaskExecutor(queue: queue)
        self.mainLoop = MainLoopSources(queue: queue)
        self.uniqueName = uniqueName
        self.observer = observer
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    /// Installs the filter, watch, timeout and dispatch-status functions (queue only, once).
    private func installHandlers() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_add_filter(raw, { _, message, context in
            guard let message, let context else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().filter(message)
        }, context, nil)
        dbus_connection_set_watch_functions(raw, { watch, context in
            guard let watch, let context else { return 0 }
            Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().addWatch(watch)
            return 1
        }, { watch, context in
            guard let watch, let context else { return }
            Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().removeWatch(watch)
        }, { watch, context in
            guard let watch, let context else { return }
            Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().toggleWatch(watch)
        }, context, nil)
        dbus_connection_set_timeout_functions(raw, { timeout, context in
            guard let timeout, let context else { return 0 }
            Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().addTimeout(timeout)
            return 1
        }, { timeout, context in
            guard let timeout, let context else { return }
            Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().removeTimeout(timeout)
        }, { timeout, context in
            guard let timeout, let context else { return }
            Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().toggleTimeout(timeout)
        }, context, nil)
        dbus_connection_set_dispatch_status_function(raw, { _, status, context in
            guard let context, status == DBUS_DISPATCH_DATA_REMAINS else { return }
            Unmanaged<BusConnection>.fromOpaque(context).takeUnretainedValue().scheduleDrain()
        }, context, nil)
        scheduleDrain()
    }

    deinit {
        // The last reference is gone, so nothing else can be using the connection.
        if !tornDown { teardown() }
    }

    /// Whether the caller runs on ``queue`` (a reply, signal or lost handler).
    private var onQueue: Bool { DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self) }

    /// Closes the connection: pending calls fail with ``BusError/disconnected``, later calls
    /// fail at once, the ``onConnectionLost(_:)`` handlers run, signal handlers are dropped.
    ///
    /// Never blocks and never waits for the daemon: safe from any thread and from inside a
    /// reply, signal or lost handler. Called on ``queue`` it takes effect before it returns;
    /// from elsewhere, before anything enqueued after it (a later ``send(_:replyHandler:)``
    /// fails with ``BusError/disconnected``).
    public func close() {
        if onQueue { shutDown(failingWith: .disconnected) } else { queue.async { [self] in shutDown(failingWith: .disconnected) } }
    }

    /// Marks the connection closed, fails what waits on it, and tears libdbus's side down on a
    /// later turn of the queue (this may run inside `dbus_connection_dispatch`). Queue only.
    func shutDown(failingWith error: BusError) {
        guard isOpen else { return }
        isOpen = false
        let handlers = lostHandlers.map(\.handler)
        router.removeAll()
        lostHandlers.removeAll()
        exported.close()
        observer?.observe(.closed, at: .now)
        failPending(with: error)
        resumeFlushWaiters()
        for handler in handlers { handler() }
        queue.async { [self] in if !tornDown { teardown() } }
    }

    private func teardown() {
        isOpen = false
        tornDown = true
        router.removeAll()
        lostHandlers.removeAll()
        dbus_connection_set_dispatch_status_function(raw, nil, nil, nil)
        dbus_connection_close(raw)
        dbus_connection_set_watch_functions(raw, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(raw, nil, nil, nil, nil, nil)
        mainLoop.cancelAll()
        dbus_connection_unref(raw)
    }

    // MARK: - Signals

    /// Routes received signals matching any of `rules` to `handler`, on ``queue``, in arrival
    /// order, in batches (one call per dispatch pass, and always before a later reply is
    /// delivered). Local routing only: ask the bus for the signals with ``addMatch(_:)``.
    /// Handlers of one batch run in the order they were registered. Registration never
    /// blocks (it takes effect on ``queue`` before anything enqueued after it, such as a call
    /// sent next); it may be made from inside a handler.
    /// - Returns: a token for ``removeSignalHandler(_:)``.
    @discardableResult
    public func addSignalHandler(matching rules: [MatchRule], _ handler: @escaping @Sendable ([Message]) -> Void) -> HandlerToken {
        let id = nextToken.add(1, ordering: .relaxed).newValue
        onQueueOrLater { [self] in if isOpen { router.add(id: id, rules: rules, handler: handler) } }
        return HandlerToken(id: id)
    }

    public func removeSignalHandler(_ token: HandlerToken) {
        onQueueOrLater { [self] in router.remove(id: token.id) }
    }

    /// Runs `handler` on ``queue`` once when the connection ends: lost (the daemon hung up),
    /// or closed by ``close()``; at once (on the queue) when it has ended already. It runs
    /// after the signals received before the end and after pending calls have failed.
    @discardableResult
    public func onConnectionLost(_ handler: @escaping @Sendable () -> Void) -> HandlerToken {
        let id = nextToken.add(1, ordering: .relaxed).newValue
        onQueueOrLater { [self] in
            if isOpen { lostHandlers.append((id, handler)) } else { handler() }
        }
        return HandlerToken(id: id)
    }

    /// Runs `work` now when on ``queue``, else enqueues it.
    func onQueueOrLater(_ work: @escaping @Sendable () -> Void) {
        if onQueue { work() } else { queue.async(execute: work) }
    }

    /// Asks the bus daemon to route signals matching `rule` to this connection (`AddMatch`).
    public func addMatch(_ rule: MatchRule, timeout: Duration? = nil) async throws {
        _ = try await call(Self.busCall("AddMatch", [.string(rule.description)]), timeout: timeout)
    }

    /// `RemoveMatch`.
    public func removeMatch(_ rule: MatchRule, timeout: Duration? = nil) async throws {
        _ = try await call(Self.busCall("RemoveMatch", [.string(rule.description)]), timeout: timeout)
    }

    /// The unique name owning `name`, or nil when nobody owns it (`GetNameOwner`).
    public func nameOwner(of name: String, timeout: Duration? = nil) async throws -> String? {
        do {
            let reply = try await call(Self.busCall("GetNameOwner", [.string(name)]), timeout: timeout)
            return reply.body.first?.string
        } catch BusError.errorReply(DBusErrorName.nameHasNoOwner, _) {
            return nil
        }
    }

    /// A method call to the bus daemon itself (`org.freedesktop.DBus`).
    public static func busCall(_ member: String, _ arguments: [DBusValue]) -> MethodCall {
        MethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                   interface: "org.freedesktop.DBus", member: member, arguments: arguments)
    }

    // MARK: - Introspection for tests

    /// Caps the bytes of received messages libdbus holds before it stops reading the socket
    /// (`dbus_connection_set_max_received_size`; libdbus's default is 63 MiB). Tests use a tiny
    /// cap to make libdbus turn the read watch off and on around every message.
    package func setMaxReceivedSize(_ bytes: Int) {
        queue.async { [self] in if !tornDown { dbus_connection_set_max_received_size(raw, bytes) } }
    }

    /// Reply handlers still registered (calls sent and neither answered nor cancelled).
    package var registeredReplyHandlerCount: Int { queue.sync { replyHandlers.count } }
    /// Calls sent whose outcome has not been delivered, as the read thread counts them
    /// (``ReplyWatch``): a call counts from ``send(_:replyHandler:)`` on.
    package var callsAwaitingReply: Int { replies.count }
    /// What the read thread's last turn dispatched; nil before the first (or with a Dispatch
    /// source for the read watch).
    var lastPollTurn: ReadPoller.Turn? { queue.sync { turnsRun ? thisTurn : nil } }
    /// Signal handlers registered.
    package var signalHandlerCount: Int { queue.sync { router.count } }
    /// Send times kept for the observer's latencies (always 0 without an observer).
    package var tracedCallCount: Int { queue.sync { callTimes.count } }

    private static func name(of error: DBusError) -> String {
        error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
    }

    /// libdbus's message, without the line ends and spaces some of its messages end with
    /// ("... should have been escaped\n").
    private static func message(of error: DBusError) -> String {
        guard let message = error.message else { return "unknown error" }
        let text = String(cString: message)
        return String(text[..<(text.lastIndex { !$0.isWhitespace }.map(text.index(after:)) ?? text.startIndex)])
    }
}


/// How an exported object answers a method call (``BusConnection/export(_:_:)``).
public enum MethodReply: Sendable {
    /// A method return with these values.
    case values([DBusValue])
    /// An error reply: its D-Bus name (`org.bluez.Error.Rejected`) and message.
    case error(name: String, message: String)
    /// No reply (the caller's own timeout decides).
    case noReply
}

/// Identifies a handler registered on a ``BusConnection``.
public struct HandlerToken: Hashable, Sendable {
    let id: UInt64
}

/// Carries a non-Sendable value (a libdbus pointer) to the queue it is confined to.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
