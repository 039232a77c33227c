internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// What a BusConnection receives, dispatched on its queue: libdbus's messages read (by the
// read thread's turns, or the Dispatch sources), replies to their handlers, signals to their
// routes, method calls to the exported objects; and libdbus's watches and timeouts.
extension BusConnection {
func scheduleDrain() {
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
        router.deliverBatches()
        // libdbus answers org.freedesktop.DBus.Peer calls (Ping, GetMachineId) itself while
        // dispatching: a reply it could not write yet counts as a send, so that flush(within:)
        // waits for it as for ours.
        if isOpen, dbus_connection_has_messages_to_send(raw) != 0 {
            sends.sendRequested()
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

    func filter(_ message: OpaquePointer) -> DBusHandlerResult {
        switch Int32(dbus_message_get_type(message)) {
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN, CDBUS_MESSAGE_TYPE_ERROR:
            let serial = dbus_message_get_reply_serial(message)
            let handler = replyHandlers.removeValue(forKey: serial)
            if handler != nil { replies.settled() }
            var traced: Message?
            if let observer { traced = observeReply(message, serial: serial, abandoned: handler == nil, observer) }
            guard let handler else {
                return DBUS_HANDLER_RESULT_HANDLED  // a late reply to a call given up on
            }
            router.deliverBatches()
            let decoded = traced ?? MessageDecoder.decode(message)
            if decoded.kind == .error {
                handler(.failure(.errorReply(name: decoded.errorName ?? "", message: decoded.errorMessage)))
            } else {
                handler(.success(decoded))
            }
            return DBUS_HANDLER_RESULT_HANDLED
        case CDBUS_MESSAGE_TYPE_METHOD_CALL:
            thisTurn.callsReceived &+= 1
            router.deliverBatches()
            answer(message)
            return DBUS_HANDLER_RESULT_HANDLED
        case CDBUS_MESSAGE_TYPE_SIGNAL:
            if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                connectionLost()
                return DBUS_HANDLER_RESULT_HANDLED
            }
            thisTurn.signals &+= 1
            router.route(message, observer: observer)
            return DBUS_HANDLER_RESULT_HANDLED
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }

    /// Tells `observer` of a reply (after the signals that came before it have gone to their
    /// handlers, so that what they make of them is seen first) and returns it decoded.
    private func observeReply(_ raw: OpaquePointer, serial: UInt32, abandoned: Bool, _ observer: any BusObserver) -> Message {
        router.deliverBatches()
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
        router.deliverBatches()
        shutDown(failingWith: .disconnected)
    }

    func failPending(with error: BusError) {
        // In the order the calls were sent (libdbus hands serials out in sequence).
        let handlers = replyHandlers.sorted { $0.key < $1.key }.map(\.value)
        replyHandlers.removeAll()
        replies.settled(handlers.count)
        for handler in handlers { handler(.failure(error)) }
    }

    // MARK: - Watches and timeouts (queue only; called by libdbus)

    func addWatch(_ watch: OpaquePointer) {
        mainLoop.addWatch(watch, coalescing: .init(window: Self.coalescingWindow), replies: replies,
                          turn: { [weak self] watch in
                              guard let self else { return ReadPoller.Turn(signals: 0, callsReceived: 0) }
                              let box = UncheckedBox(watch)
                              return queue.sync { self.pollTurn(box.value) }
                          },
                          ready: { [weak self] watch, flags in self?.handleWatch(watch, flags: flags) })
    }

    func removeWatch(_ watch: OpaquePointer) {
        mainLoop.removeWatch(watch)
    }

    func toggleWatch(_ watch: OpaquePointer) {
        mainLoop.toggleWatch(watch)
    }

    private func handleWatch(_ watch: OpaquePointer, flags: UInt32) {
        guard isOpen, mainLoop.serves(watch) else { return }
        // Read before handling: on a hang-up libdbus may free the watch inside the call.
        let fd = dbus_watch_get_unix_fd(watch)
        dbus_watch_handle(watch, flags)
        if flags == CDBUS_WATCH_READABLE {
            // libdbus reads at most 2 KiB per call. While more is waiting in the socket, read
            // on (bounded), so one drain dispatches a large batch and the handlers (and the
            // tasks they wake) run once for it instead of once per handful of signals.
            var rounds = 0
            while rounds < 256, isOpen, mainLoop.serves(watch), Self.bytesWaiting(fd) > 0 {
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

    func addTimeout(_ timeout: OpaquePointer) {
        mainLoop.addTimeout(timeout, fire: timeoutFired)
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        mainLoop.removeTimeout(timeout)
    }

    func toggleTimeout(_ timeout: OpaquePointer) {
        mainLoop.toggleTimeout(timeout, fire: timeoutFired)
    }

    /// What a libdbus timeout's timer runs.
    private var timeoutFired: @Sendable (OpaquePointer) -> Void {
        { [weak self] timeout in
            guard let self, isOpen, mainLoop.serves(timeout: timeout) else { return }
            dbus_timeout_handle(timeout)
            scheduleDrain()
        }
    }
}
