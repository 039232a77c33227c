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
    public let queue: DispatchQueue
    /// Runs the jobs of tasks that prefer it (`withTaskExecutorPreference`) on ``queue``: a
    /// task consuming what signal handlers produce is resumed on the thread that received the
    /// signal, with no hand-off to the cooperative pool. Its work must not block (it holds up
    /// every message behind it); an `await` frees the queue.
    public var taskExecutor: any TaskExecutor { executor }
    private let executor: QueueTaskExecutor
    /// The unique bus name the daemon gave this connection (`:1.42`).
    public let uniqueName: String
    /// Told of every message sent and received; nil (the usual case) costs one check per message.
    private let observer: (any BusObserver)?

    // All of the following are confined to `queue`.
    private let raw: OpaquePointer
    /// False once the connection is closed by us or lost: every new call then fails at once.
    private var isOpen = true
    /// Whether libdbus's side has been torn down (after ``isOpen`` went false).
    private var tornDown = false
    private var replyHandlers = ReplyTable()
    /// The calls awaiting replies, counted from any thread for the read thread (``ReplyWatch``).
    private let replies = ReplyWatch()
    /// When each call awaiting its reply was sent; kept only for an ``observer``.
    private var callTimes: [UInt32: ContinuousClock.Instant] = [:]
    // The three properties routeSignal touches for every signal are `@exclusivity(unchecked)`:
    // confined to `queue`, they cannot be accessed twice at once, and Swift's check at run time
    // of each access to a class's stored property cost some 90 instructions each.
    /// Signal routes in registration order: handlers of one batch run in that order.
    @exclusivity(unchecked) private var routes: [(id: UInt64, route: SignalRoute)] = []
    /// The senders and paths of the latest signals (header strings reused; queue only).
    @exclusivity(unchecked) private var recentStrings = StringInterner()
    /// Connection-lost handlers in registration order.
    private var lostHandlers: [(id: UInt64, handler: @Sendable () -> Void)] = []
    /// Continuations of ``flush(within:)`` waiting for the outgoing queue to empty.
    private var flushWaiters: [FlushWaiter] = []
    /// Sends asked for, from any thread, counted before they are enqueued (a call, an emit of
    /// signals, a reply to an incoming call: one each).
    private let sendsRequested = Atomic<UInt64>(0)
    /// Sends the queue has handed to libdbus (or dropped: the connection closed).
    private var sendsHanded: UInt64 = 0
    /// ``sendsHanded`` as it was when libdbus last had nothing left to write: equal to
    /// ``sendsRequested``, nothing asked for is unsent, and ``flush(within:)`` answers at once.
    private let sendsWritten = Atomic<UInt64>(0)
    /// Objects this connection exports. Behind a lock of its own, not confined to the queue,
    /// so that ``export(_:_:)`` takes effect when it returns: the queue may read a call in one
    /// turn and dispatch it in a later one enqueued before the export, and a call sent after
    /// the export must still find it.
    private let exported = Lock(Exports())
    private var watches = HandleTable<WatchSources>()
    /// Read watches served by a thread of their own (``ReadPoller``) instead of a Dispatch source.
    private var pollers = HandleTable<ReadPoller>()
    /// True during a ``ReadPoller`` turn: a drain then runs within the turn, on its thread.
    private var inPollTurn = false
    private var drainWanted = false
    /// What the current (between turns: the last) ``ReadPoller`` turn dispatched.
    @exclusivity(unchecked) private var thisTurn = ReadPoller.Turn(signals: 0, callsReceived: 0)
    /// Whether a ``ReadPoller`` turn has run (tests read ``lastPollTurn``).
    private var turnsRun = false
    private var timeouts = HandleTable<any DispatchSourceTimer>()
    private var drainScheduled = false
    /// Handler tokens, handed out from any thread without touching the queue.
    private let nextToken = Atomic<UInt64>(0)
    /// Marks ``queue`` so that calls made on it (from a handler) are recognised.
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    /// How long the reading thread waits before reading again in a dense signal stream (see
    /// the type's comment): a live discovery of 2,000 devices woke it once per one or two
    /// signals, and each turn's fixed cost (a wake-up, the queue, the handlers and the tasks
    /// they resume, five system calls) was most of the CPU it took (issue 12).
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
            let connection = BusConnection(raw: raw.value, uniqueName: uniqueName, queue: queue, observer: observer)
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
            completion(.success(Opened(raw: UncheckedBox(raw), uniqueName: uniqueName, queue: queue, registered: .now)))
        }
    }

    private init(raw: OpaquePointer, uniqueName: String, queue: DispatchQueue, observer: (any BusObserver)?) {
        self.raw = raw
        self.queue = queue
        self.executor = QueueTaskExecutor(queue: queue)
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
    private func shutDown(failingWith error: BusError) {
        guard isOpen else { return }
        isOpen = false
        let handlers = lostHandlers.map(\.handler)
        routes.removeAll()
        lostHandlers.removeAll()
        exported.withLock { $0 = Exports(closed: true) }
        observer?.observe(.closed, at: .now)
        failPending(with: error)
        resumeFlushWaiters()
        for handler in handlers { handler() }
        queue.async { [self] in if !tornDown { teardown() } }
    }

    private func teardown() {
        isOpen = false
        tornDown = true
        routes.removeAll()
        lostHandlers.removeAll()
        dbus_connection_set_dispatch_status_function(raw, nil, nil, nil)
        dbus_connection_close(raw)
        dbus_connection_set_watch_functions(raw, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(raw, nil, nil, nil, nil, nil)
        for sources in watches.values { sources.cancel() }
        watches.removeAll()
        for poller in pollers.values { poller.stop() }
        pollers.removeAll()
        for timer in timeouts.values { timer.cancel() }
        timeouts.removeAll()
        dbus_connection_unref(raw)
    }

    // MARK: - Method calls

    /// Sends a method call; `replyHandler` runs once on ``queue`` with the reply, the error
    /// reply as ``BusError/errorReply(name:message:)``, or ``BusError/disconnected`` — unless
    /// the returned ``PendingReply`` is cancelled first.
    @discardableResult
    public func send(_ call: MethodCall, replyHandler: @escaping @Sendable (Result<Message, BusError>) -> Void) -> PendingReply {
        let pending = PendingReply(connection: self)
        replies.callSent()
        sendsRequested.add(1, ordering: .sequentiallyConsistent)
        queue.async { [self] in
            defer { sendHanded() }
            guard isOpen else {
                replies.settled()
                observer?.observe(.callNotSent(call, .disconnected), at: .now)
                replyHandler(.failure(.disconnected))
                return
            }
            let message: OpaquePointer
            do throws(BusError) {
                try checkDescriptorPassing(call.arguments)
                message = try MessageEncoder.methodCall(call)
            } catch {
                replies.settled()
                observer?.observe(.callNotSent(call, error), at: .now)
                replyHandler(.failure(error))
                return
            }
            defer { dbus_message_unref(message) }
            var serial: UInt32 = 0
            guard dbus_connection_send(raw, message, &serial) != 0 else {
                replies.settled()
                observer?.observe(.callNotSent(call, .outOfMemory), at: .now)
                replyHandler(.failure(.outOfMemory))
                return
            }
            pending.serial = serial
            replyHandlers.insert(replyHandler, for: serial)
            // The read thread fell asleep after the turn it last ran (a signal stream) without
            // this call: woken, it reads the reply as soon as it comes (ReplyWatch).
            if replies.isSleeping { for poller in pollers.values { poller.interruptSleep() } }
            if let observer {
                let now = ContinuousClock.now
                callTimes[serial] = now
                observer.observe(.call(call, serial: serial, expectsReply: true), at: now)
            }
        }
        return pending
    }

    /// Emits the signals, in order, back to back (a receiver reading them together gets them
    /// in one batch).
    /// - Throws: ``BusError/invalidArgument(_:)`` (checked before anything is sent),
    ///   ``BusError/disconnected``, ``BusError/outOfMemory``.
    public func emit(_ signals: [Signal]) async throws {
        var encoded = [UncheckedBox<OpaquePointer>]()
        for signal in signals {
            do throws(BusError) { encoded.append(UncheckedBox(try MessageEncoder.signal(signal))) } catch {
                for message in encoded { dbus_message_unref(message.value) }
                throw error
            }
        }
        let sent = encoded
        let arguments = signals.flatMap(\.arguments)
        let result: Result<Void, BusError> = await withCheckedContinuation { continuation in
            sendsRequested.add(1, ordering: .sequentiallyConsistent)
            queue.async { [self] in
                defer {
                    for message in sent { dbus_message_unref(message.value) }
                    sendHanded()
                }
                guard isOpen else { continuation.resume(returning: .failure(.disconnected)); return }
                do throws(BusError) { try checkDescriptorPassing(arguments) } catch {
                    continuation.resume(returning: .failure(error))
                    return
                }
                for (index, message) in sent.enumerated() {
                    guard dbus_connection_send(raw, message.value, nil) != 0 else {
                        continuation.resume(returning: .failure(.outOfMemory))
                        return
                    }
                    observer?.observe(.emitted(signals[index]), at: .now)
                }
                continuation.resume(returning: .success(()))
            }
        }
        try result.get()
    }

    /// Sends a method call flagged no-reply-expected (fire and forget).
    public func sendNoReply(_ call: MethodCall) {
        sendsRequested.add(1, ordering: .sequentiallyConsistent)
        queue.async { [self] in
            defer { sendHanded() }
            guard isOpen, (try? checkDescriptorPassing(call.arguments)) != nil,
                  let message = try? MessageEncoder.methodCall(call) else {
                observer?.observe(.callNotSent(call, isOpen ? .invalidArgument("not encodable") : .disconnected), at: .now)
                return
            }
            defer { dbus_message_unref(message) }
            dbus_message_set_no_reply(message, 1)
            var serial: UInt32 = 0
            if dbus_connection_send(raw, message, &serial) != 0 {
                observer?.observe(.call(call, serial: serial, expectsReply: false), at: .now)
            }
        }
    }

    /// Calls a method and waits for its reply.
    /// - Parameter timeout: how long to wait for the reply; nil waits until the reply, the
    ///   cancellation of the task or the loss of the connection.
    /// - Returns: the method return message.
    /// - Throws: ``BusError`` (`errorReply`, `timedOut`, `disconnected`, `invalidArgument`), or
    ///   `CancellationError`. A late reply after a timeout or cancellation is dropped.
    public func call(_ call: MethodCall, timeout: Duration? = nil) async throws -> Message {
        try await withOneShot(timeout: timeout) { (shot: OneShot<Message>) in
            let pending = send(call) { result in shot.resolve(result.mapError { $0 }) }
            shot.onFinish { pending.cancel() }
        }
    }

    /// Waits until everything sent before it has been handed to libdbus (the connection's
    /// queue has reached it) and written to the socket, the connection is closed or lost, or
    /// `limit` passes while the socket takes nothing (a stalled daemon that reads nothing).
    /// The limit counts from the moment the queue reaches the flush, not from the call: a
    /// queue busy with a flood of incoming signals delays it, but a call sent before it is
    /// never left unsent (a process that exits after clean-up used to leave its Disconnect
    /// unsent when its queue was busy past the limit). Never blocks a thread: the writing is
    /// done by the connection's write watch.
    /// - Returns: whether the outgoing queue was empty.
    /// Not cancellable: it is clean-up's last step.
    @discardableResult
    public func flush(within limit: Duration) async -> Bool {
        // Everything asked for was handed to libdbus, and libdbus then had nothing left to
        // write: nothing to wait for, and no turn of the queue to wait for it.
        if nothingUnsent { return true }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiter = FlushWaiter(continuation)
            queue.async { [self] in
                if !isOpen || dbus_connection_has_messages_to_send(raw) == 0 {
                    waiter.resume(flushed: true)
                } else {
                    let timer = OneShotTimer.schedule(after: limit) { waiter.resume(flushed: false) }
                    waiter.onResume { timer.cancel() }
                    flushWaiters.append(waiter)
                }
            }
        }
    }

    /// Whether every send asked for has been handed to libdbus and written (from any thread).
    package var nothingUnsent: Bool {
        sendsWritten.load(ordering: .sequentiallyConsistent) == sendsRequested.load(ordering: .sequentiallyConsistent)
    }

    /// A send asked for has been handed to libdbus, or dropped (queue only).
    private func sendHanded() {
        sendsHanded += 1
        noteWritten()
    }

    /// Records that what was handed to libdbus has been written, if libdbus has nothing left
    /// to write (queue only; nothing once libdbus's side is torn down).
    private func noteWritten() {
        guard !tornDown, dbus_connection_has_messages_to_send(raw) == 0 else { return }
        sendsWritten.store(sendsHanded, ordering: .sequentiallyConsistent)
    }

    /// Resumes ``flush(within:)`` callers once nothing waits to be written (queue only).
    private func resumeFlushWaiters() {
        guard !flushWaiters.isEmpty, !isOpen || dbus_connection_has_messages_to_send(raw) == 0 else { return }
        let waiters = flushWaiters
        flushWaiters.removeAll()
        for waiter in waiters { waiter.resume(flushed: true) }
    }

    /// Throws when `values` hold a Unix file descriptor and this connection cannot pass one
    /// (libdbus would drop such a message silently: `dbus_connection_send` refuses it). Queue only.
    private func checkDescriptorPassing(_ values: [DBusValue]) throws(BusError) {
        guard values.contains(where: \.containsUnixFD), dbus_connection_can_send_type(raw, CDBUS_TYPE_UNIX_FD) == 0 else { return }
        throw .invalidArgument("this connection cannot pass Unix file descriptors (only a bus on a Unix socket can)")
    }

    fileprivate func cancelReply(serial: UInt32) {
        if replyHandlers.remove(serial) != nil { replies.settled() }
    }

    // MARK: - Signals

    /// Routes received signals matching any of `rules` to `handler`, on ``queue``, in arrival
    /// order, in batches (one call per dispatch pass, and always before a later reply is
    /// delivered). Local routing only: ask the bus for the signals with ``addMatch(_:)``.
    /// - Returns: a token for ``removeSignalHandler(_:)``.
    /// Handlers of one batch run in the order they were registered. Registration never
    /// blocks (it takes effect on ``queue`` before anything enqueued after it, such as a call
    /// sent next); it may be made from inside a handler.
    /// - Returns: a token for ``removeSignalHandler(_:)``.
    @discardableResult
    public func addSignalHandler(matching rules: [MatchRule], _ handler: @escaping @Sendable ([Message]) -> Void) -> HandlerToken {
        let id = nextToken.add(1, ordering: .relaxed).newValue
        onQueueOrLater { [self] in if isOpen { routes.append((id, SignalRoute(rules: rules, handler: handler))) } }
        return HandlerToken(id: id)
    }

    public func removeSignalHandler(_ token: HandlerToken) {
        onQueueOrLater { [self] in routes.removeAll { $0.id == token.id } }
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
    private func onQueueOrLater(_ work: @escaping @Sendable () -> Void) {
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

    // MARK: - Exported objects

    /// Answers method calls to `path` with `handler` (on ``queue``, in arrival order, after
    /// the signals received before each call). Calls to paths nobody exports are answered
    /// `org.freedesktop.DBus.Error.UnknownObject`. A later export of the same path replaces
    /// this one. It takes effect before it returns: every call dispatched afterwards finds it
    /// (a closed connection ignores it).
    /// - Returns: a token for ``unexport(_:)``.
    @discardableResult
    public func export(_ path: ObjectPath, _ handler: @escaping @Sendable (Message) -> MethodReply) -> HandlerToken {
        let id = nextToken.add(1, ordering: .relaxed).newValue
        exported.withLock { if !$0.closed { $0.handlers[path] = (id, handler) } }
        return HandlerToken(id: id)
    }

    /// Stops answering for the object exported with `token`, before it returns.
    public func unexport(_ token: HandlerToken) {
        exported.withLock { exports in
            if let path = exports.handlers.first(where: { $0.value.id == token.id })?.key { exports.handlers[path] = nil }
        }
    }

    /// Answers a method call later: `call` is the message an exported object's handler got
    /// (and answered ``MethodReply/noReply``). Does nothing when the caller asked for no reply
    /// or the connection is closed.
    public func reply(to call: Message, _ reply: MethodReply) {
        sendsRequested.add(1, ordering: .sequentiallyConsistent)
        onQueueOrLater { [self] in
            send(reply, to: call)
            sendHanded()
        }
    }

    /// Sends `reply` to `call` (queue only): a method return with the values (an error
    /// `org.freedesktop.DBus.Error.Failed` if they cannot be encoded, or carry a Unix fd the
    /// connection cannot pass), or an error reply.
    private func send(_ reply: MethodReply, to call: Message) {
        guard isOpen, let caller = call.sender, call.kind == .methodCall else { return }
        let message: OpaquePointer?
        switch reply {
        case .noReply:
            return
        case .values(let values):
            do throws(BusError) { try checkDescriptorPassing(values) } catch {
                send(.error(name: "org.freedesktop.DBus.Error.Failed", message: error.description), to: call)
                return
            }
            message = dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN)
            if let message, (try? MessageEncoder.append(values, to: message)) == nil {
                dbus_message_unref(message)
                send(.error(name: "org.freedesktop.DBus.Error.Failed", message: "reply values could not be encoded"), to: call)
                return
            }
        case .error(let name, let text):
            message = dbus_message_new(CDBUS_MESSAGE_TYPE_ERROR)
            if let message {
                let valid = dbus_validate_error_name(name, nil) != 0 ? name : "org.freedesktop.DBus.Error.Failed"
                dbus_message_set_error_name(message, valid)
                if !text.utf8.contains(0) { try? MessageEncoder.append([.string(text)], to: message) }
            }
        }
        guard let message else { return }
        dbus_message_set_reply_serial(message, call.serial)
        dbus_message_set_destination(message, caller)
        dbus_message_set_no_reply(message, 1)
        dbus_connection_send(raw, message, nil)
        dbus_message_unref(message)
        observer?.observe(.answered(call, reply), at: .now)
    }

    /// Asks the bus for a well-known name (`RequestName`, flag DO_NOT_QUEUE).
    /// - Returns: whether this connection is now its primary owner.
    public func requestName(_ name: String, timeout: Duration? = nil) async throws -> Bool {
        let reply = try await call(Self.busCall("RequestName", [.string(name), .uint32(4)]), timeout: timeout)
        // 1: primary owner, 4: already the owner.
        return [1, 4].contains(reply.body.first?.integer)
    }

    /// Gives up a well-known name (`ReleaseName`).
    public func releaseName(_ name: String, timeout: Duration? = nil) async throws {
        _ = try await call(Self.busCall("ReleaseName", [.string(name)]), timeout: timeout)
    }

    private func answer(_ incoming: OpaquePointer) {
        let call = MessageDecoder.decode(incoming)
        observer?.observe(.incomingCall(call), at: .now)
        let reply: MethodReply
        if let path = call.path, let entry = exported.withLock({ $0.handlers[path] }) {
            reply = entry.handler(call)
        } else {
            reply = .error(name: DBusErrorName.unknownObject, message: "no object at \(call.path?.rawValue ?? "?")")
        }
        guard dbus_message_get_no_reply(incoming) == 0 else { return }
        sendsRequested.add(1, ordering: .sequentiallyConsistent)
        send(reply, to: call)
        sendHanded()
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
    package var signalHandlerCount: Int { queue.sync { routes.count } }
    /// Send times kept for the observer's latencies (always 0 without an observer).
    package var tracedCallCount: Int { queue.sync { callTimes.count } }

    // MARK: - Dispatching (queue only)

    private func scheduleDrain() {
        if inPollTurn {
            drainWanted = true
            return
        }
        guard !drainScheduled else { return }
        drainScheduled = true
        queue.async { [weak self] in
            guard let self else { return }
            drainScheduled = false
            drain()
        }
    }

    private func drain() {
        guard isOpen else { return }
        while isOpen && dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
        flushSignalBatches()
        // libdbus answers org.freedesktop.DBus.Peer calls (Ping, GetMachineId) itself while
        // dispatching: a reply it could not write yet counts as a send, so that flush(within:)
        // waits for it as for ours.
        if isOpen, dbus_connection_has_messages_to_send(raw) != 0 {
            sendsRequested.add(1, ordering: .sequentiallyConsistent)
            sendHanded()
        }
    }

    /// A ``ReadPoller`` found the socket readable (its thread, inside `queue.sync`): reads,
    /// dispatches, runs the handlers and then the consumers they resumed on
    /// ``taskExecutor``, all on this thread. Work a handler enqueues with `queue.async` still
    /// goes to a Dispatch worker, after the turn.
    /// Returns what the turn dispatched (see ``coalescingWindow``).
    private func pollTurn(_ watch: OpaquePointer) -> ReadPoller.Turn {
        inPollTurn = true
        thisTurn = ReadPoller.Turn(signals: 0, callsReceived: 0)
        turnsRun = true
        defer { inPollTurn = false }
        executor.collectingJobs {
            handleWatch(watch, flags: CDBUS_WATCH_READABLE)
            while drainWanted {
                drainWanted = false
                drain()
                executor.runCollected()
            }
        }
        return thisTurn
    }

    private func flushSignalBatches() {
        for (_, route) in routes where !route.batch.isEmpty {
            let batch = route.batch
            route.batch.removeAll(keepingCapacity: true)
            route.handler(batch)
        }
    }

    private func filter(_ message: OpaquePointer) -> DBusHandlerResult {
        switch Int32(dbus_message_get_type(message)) {
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN, CDBUS_MESSAGE_TYPE_ERROR:
            let serial = dbus_message_get_reply_serial(message)
            let handler = replyHandlers.remove(serial)
            if handler != nil { replies.settled() }
            var traced: Message?
            if let observer { traced = observeReply(message, serial: serial, abandoned: handler == nil, observer) }
            guard let handler else {
                return DBUS_HANDLER_RESULT_HANDLED  // a late reply to a call given up on
            }
            flushSignalBatches()
            let decoded = traced ?? MessageDecoder.decode(message)
            if decoded.kind == .error {
                handler(.failure(.errorReply(name: decoded.errorName ?? "", message: decoded.errorMessage)))
            } else {
                handler(.success(decoded))
            }
            return DBUS_HANDLER_RESULT_HANDLED
        case CDBUS_MESSAGE_TYPE_METHOD_CALL:
            thisTurn.callsReceived &+= 1
            flushSignalBatches()
            answer(message)
            return DBUS_HANDLER_RESULT_HANDLED
        case CDBUS_MESSAGE_TYPE_SIGNAL:
            if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                connectionLost()
                return DBUS_HANDLER_RESULT_HANDLED
            }
            routeSignal(message)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }

    private func routeSignal(_ raw: OpaquePointer) {
        thisTurn.signals &+= 1
        guard !routes.isEmpty else {
            observer?.observe(.signal(MessageDecoder.decode(raw), routed: false), at: .now)
            return
        }
        let header = MessageDecoder.header(raw, recent: &recentStrings)
        var decoded: Message?
        var routed = false
        for (_, route) in routes {
            var matched = false
            // By index: `for rule in rules` copies each rule (a retain and a release of each of
            // its strings, a dozen a signal).
            let rules = route.rules
            for i in rules.indices where rules[i].matches(header) {
                if rules[i].arg0 != nil {
                    if decoded == nil { decoded = MessageDecoder.decodeSignal(raw, header: header) }
                    guard rules[i].matchesArguments(of: decoded!) else { continue }
                }
                matched = true
                break
            }
            guard matched else { continue }
            routed = true
            if decoded == nil { decoded = MessageDecoder.decodeSignal(raw, header: header) }
            route.batch.append(decoded!)
        }
        observer?.observe(.signal(decoded ?? MessageDecoder.decodeSignal(raw, header: header), routed: routed), at: .now)
    }

    /// Tells `observer` of a reply (after the signals that came before it have gone to their
    /// handlers, so that what they make of them is seen first) and returns it decoded.
    private func observeReply(_ raw: OpaquePointer, serial: UInt32, abandoned: Bool, _ observer: any BusObserver) -> Message {
        flushSignalBatches()
        let reply = MessageDecoder.decode(raw)
        let now = ContinuousClock.now
        let sent = callTimes.removeValue(forKey: serial)
        observer.observe(.reply(reply, latency: sent.map { now - $0 } ?? .zero, abandoned: abandoned), at: now)
        return reply
    }

    /// The daemon hung up (libdbus's local Disconnected signal, the last message): the
    /// signals that arrived ahead of the loss are delivered first, then pending calls fail,
    /// then the lost handlers run; every later call fails at once.
    private func connectionLost() {
        guard isOpen else { return }
        flushSignalBatches()
        shutDown(failingWith: .disconnected)
    }

    private func failPending(with error: BusError) {
        let handlers = replyHandlers.removeAll()
        replies.settled(handlers.count)
        for handler in handlers { handler(.failure(error)) }
    }

    // MARK: - Watches and timeouts (queue only; called by libdbus)

    private func addWatch(_ watch: OpaquePointer) {
        let flags = dbus_watch_get_flags(watch)
        if flags == CDBUS_WATCH_READABLE {
            let box = UncheckedBox(watch)
            let poller = ReadPoller(socket: dbus_watch_get_unix_fd(watch), enabled: dbus_watch_get_enabled(watch) != 0,
                                    coalescing: .init(window: Self.coalescingWindow), replies: replies) { [weak self] in
                guard let self else { return ReadPoller.Turn(signals: 0, callsReceived: 0) }
                return queue.sync { self.pollTurn(box.value) }
            }
            if let poller {
                pollers[watch] = poller
                return
            }
        }
        // The sources watch a duplicate of libdbus's socket, closed only once they are
        // cancelled. libdbus removes a watch and closes its socket in one call, while a
        // Dispatch source goes away later; libdispatch keys its registrations by descriptor
        // number, so a new socket given the old number (the next connection of this process)
        // would be attached to the stale registration and never wake (a reply never seen).
        let libdbusFD = dbus_watch_get_unix_fd(watch)
        let duplicate = fcntl(libdbusFD, F_DUPFD_CLOEXEC, 0)
        let fd = duplicate >= 0 ? duplicate : libdbusFD
        let sources = WatchSources(closingOnCancel: duplicate >= 0 ? duplicate : nil)
        let box = UncheckedBox(watch)
        if flags & CDBUS_WATCH_READABLE != 0 {
            sources.read = Self.makeSource(read: true, fd: fd, queue: queue) { [weak self] in
                self?.handleWatch(box.value, flags: CDBUS_WATCH_READABLE)
            }
        }
        if flags & CDBUS_WATCH_WRITABLE != 0 {
            sources.write = Self.makeSource(read: false, fd: fd, queue: queue) { [weak self] in
                self?.handleWatch(box.value, flags: CDBUS_WATCH_WRITABLE)
            }
        }
        watches[watch] = sources
        sources.setEnabled(dbus_watch_get_enabled(watch) != 0)
    }

    private static func makeSource(read: Bool, fd: Int32, queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) -> any DispatchSourceProtocol {
        let source: any DispatchSourceProtocol = read
            ? DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            : DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler(handler: handler)
        return source
    }

    private func handleWatch(_ watch: OpaquePointer, flags: UInt32) {
        guard isOpen, watches[watch] != nil || pollers[watch] != nil else { return }
        // Read before handling: on a hang-up libdbus may free the watch inside the call.
        let fd = dbus_watch_get_unix_fd(watch)
        dbus_watch_handle(watch, flags)
        if flags == CDBUS_WATCH_READABLE {
            // libdbus reads at most 2 KiB per call. While more is waiting in the socket, read
            // on (bounded), so one drain dispatches a large batch and the handlers (and the
            // tasks they wake) run once for it instead of once per handful of signals.
            // Measured on a queued drain of 10,000 devices: 38-41 -> 30-32 us of CPU each.
            var rounds = 0
            while rounds < 256, isOpen, watches[watch] != nil || pollers[watch] != nil, Self.bytesWaiting(fd) > 0 {
                dbus_watch_handle(watch, flags)
                rounds += 1
            }
        } else if isOpen {
            noteWritten()
            resumeFlushWaiters()
        }
        if isOpen { scheduleDrain() }
    }

    /// Bytes readable on `fd` now (FIONREAD).
    private static func bytesWaiting(_ fd: Int32) -> Int32 {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? count : 0
    }

    private func removeWatch(_ watch: OpaquePointer) {
        watches.removeValue(forKey: watch)?.cancel()
        pollers.removeValue(forKey: watch)?.stop()
    }

    private func toggleWatch(_ watch: OpaquePointer) {
        watches[watch]?.setEnabled(dbus_watch_get_enabled(watch) != 0)
        pollers[watch]?.setEnabled(dbus_watch_get_enabled(watch) != 0)
    }

    private func addTimeout(_ timeout: OpaquePointer) {
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = max(1, Int(dbus_timeout_get_interval(timeout)))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let box = UncheckedBox(timeout)
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(interval))
        timer.setEventHandler { [weak self] in
            guard let self, isOpen, timeouts[box.value] != nil else { return }
            dbus_timeout_handle(box.value)
            scheduleDrain()
        }
        timeouts[timeout] = timer
        timer.activate()
    }

    private func removeTimeout(_ timeout: OpaquePointer) {
        timeouts.removeValue(forKey: timeout)?.cancel()
    }

    private func toggleTimeout(_ timeout: OpaquePointer) {
        removeTimeout(timeout)
        addTimeout(timeout)
    }

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

/// A call sent with ``BusConnection/send(_:replyHandler:)``; cancelling it drops the reply
/// handler (D-Bus has no cancel on the wire: the peer still runs the call).
public final class PendingReply: @unchecked Sendable {
    private weak var connection: BusConnection?
    /// Set on the connection's queue by the send; read there by `cancel`.
    fileprivate var serial: UInt32 = 0

    fileprivate init(connection: BusConnection) { self.connection = connection }

    public func cancel() {
        guard let connection else { return }
        connection.queue.async { [self] in
            if serial != 0 { connection.cancelReply(serial: serial) }
        }
    }
}

/// A ``BusConnection/flush(within:)`` caller: resumed once, by the write watch or its timer.
private final class FlushWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var cleanup: (@Sendable () -> Void)?
    }
    private let state: Lock<State>

    init(_ continuation: CheckedContinuation<Bool, Never>) { state = Lock(State(continuation: continuation)) }

    func onResume(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard state.continuation != nil else { return true }
            state.cleanup = cleanup
            return false
        }
        if runNow { cleanup() }
    }

    func resume(flushed: Bool) {
        let taken = state.withLock { state -> State in
            defer { state = State() }
            return state
        }
        taken.cleanup?()
        taken.continuation?.resume(returning: flushed)
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

/// The objects a connection exports: path -> method-call handler; none once it is closed.
private struct Exports {
    var handlers: [ObjectPath: (id: UInt64, handler: @Sendable (Message) -> MethodReply)] = [:]
    var closed = false
}

/// A signal route: rules and a handler, with the batch collected during one dispatch pass.
private final class SignalRoute {
    let rules: [MatchRule]
    let handler: @Sendable ([Message]) -> Void
    var batch: [Message] = []

    init(rules: [MatchRule], handler: @escaping @Sendable ([Message]) -> Void) {
        self.rules = rules
        self.handler = handler
    }
}

/// The Dispatch sources of one libdbus watch; tracks suspension so resume/suspend stay balanced.
private final class WatchSources {
    var read: (any DispatchSourceProtocol)?
    var write: (any DispatchSourceProtocol)?
    private var enabled = false
    private var activated = false
    /// The descriptor the sources watch when it is our own duplicate: closed after their
    /// cancel handlers ran.
    private let closingOnCancel: Int32?
    private var cancelled = false

    init(closingOnCancel: Int32?) { self.closingOnCancel = closingOnCancel }

    func setEnabled(_ on: Bool) {
        guard on != enabled else { return }
        enabled = on
        for source in [read, write].compactMap({ $0 }) {
            if on {
                if activated { source.resume() } else { source.activate() }
            } else {
                source.suspend()
            }
        }
        activated = activated || on
    }

    /// Cancels the sources; a suspended or never-activated source is resumed first (releasing
    /// one in that state traps). Our duplicate of the socket is closed once every source's
    /// cancel handler has run (at once when there is none).
    func cancel() {
        // Once only: a second close of our duplicate could close a descriptor that has been
        // given the same number since (another connection's socket, a pipe).
        guard !cancelled else { return }
        cancelled = true
        let live = [read, write].compactMap { $0 }
        read = nil
        write = nil
        let fd = closingOnCancel
        let remaining = Lock(live.count)
        if live.isEmpty, let fd { _ = close(fd) }
        for source in live {
            if let fd {
                source.setCancelHandler {
                    if remaining.withLock({ count -> Bool in count -= 1; return count == 0 }) { _ = close(fd) }
                }
            }
            if !activated { source.activate() } else if !enabled { source.resume() }
            source.cancel()
        }
    }
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
