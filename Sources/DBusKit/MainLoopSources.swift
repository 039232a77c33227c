import Dispatch
internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libdbus's main loop for one connection: what serves the watches and timeouts libdbus
/// asks for (dbus_connection_set_watch_functions, dbus_connection_set_timeout_functions).
///
/// The read watch is served by a thread of its own (``ReadPoller``) whose turns enter the
/// connection's queue; any other watch by Dispatch sources on the queue, and each timeout by
/// a Dispatch timer there. What a watch or a timeout wakes for is the connection's business:
/// the closures given with it. Confined to the connection's queue.
final class MainLoopSources {
    private let queue: DispatchQueue
    private var watches = [OpaquePointer: WatchSources]()
    /// Read watches served by a thread of their own instead of a Dispatch source.
    private var pollers = [OpaquePointer: ReadPoller]()
    private var timeouts = [OpaquePointer: any DispatchSourceTimer]()

    init(queue: DispatchQueue) { self.queue = queue }

    /// Whether libdbus's `watch` is still served (libdbus may remove it within a handle call).
    func serves(_ watch: OpaquePointer) -> Bool {
        watches[watch] != nil || pollers[watch] != nil
    }

    /// Serves `watch`: a read-only watch by a ``ReadPoller`` (coalescing a dense signal stream
    /// with `coalescing`, woken by `replies`) whose turns are `turn` (run on its thread); any
    /// other watch, or a read watch when no poller can be made, by Dispatch sources calling
    /// `ready` on the queue with the watch and the condition (readable or writable).
    func addWatch(_ watch: OpaquePointer, coalescing: ReadPoller.Coalescing, replies: ReplyWatch,
                  turn: @escaping @Sendable (OpaquePointer) -> ReadPoller.Turn,
                  ready: @escaping @Sendable (OpaquePointer, UInt32) -> Void) {
        let flags = dbus_watch_get_flags(watch)
        let box = UncheckedBox(watch)
        if flags == CDBUS_WATCH_READABLE {
            let poller = ReadPoller(socket: dbus_watch_get_unix_fd(watch), enabled: dbus_watch_get_enabled(watch) != 0,
                                    coalescing: coalescing, replies: replies) { turn(box.value) }
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
        if flags & CDBUS_WATCH_READABLE != 0 {
            sources.read = Self.makeSource(read: true, fd: fd, queue: queue) { ready(box.value, CDBUS_WATCH_READABLE) }
        }
        if flags & CDBUS_WATCH_WRITABLE != 0 {
            sources.write = Self.makeSource(read: false, fd: fd, queue: queue) { ready(box.value, CDBUS_WATCH_WRITABLE) }
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

    func removeWatch(_ watch: OpaquePointer) {
        watches.removeValue(forKey: watch)?.cancel()
        pollers.removeValue(forKey: watch)?.stop()
    }

    func toggleWatch(_ watch: OpaquePointer) {
        watches[watch]?.setEnabled(dbus_watch_get_enabled(watch) != 0)
        pollers[watch]?.setEnabled(dbus_watch_get_enabled(watch) != 0)
    }

    /// Wakes the read threads from a coalescing sleep (a call now awaits its reply).
    func interruptPollerSleep() {
        for poller in pollers.values { poller.interruptSleep() }
    }

    /// Whether libdbus's `timeout` is still served.
    func serves(timeout: OpaquePointer) -> Bool {
        timeouts[timeout] != nil
    }

    /// Serves `timeout` (when enabled) with a repeating timer on the queue calling `fire`
    /// (which checks ``serves(timeout:)``: a timer cancelled may still fire once).
    func addTimeout(_ timeout: OpaquePointer, fire: @escaping @Sendable (OpaquePointer) -> Void) {
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = max(1, Int(dbus_timeout_get_interval(timeout)))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let box = UncheckedBox(timeout)
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(interval))
        timer.setEventHandler { fire(box.value) }
        timeouts[timeout] = timer
        timer.activate()
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        timeouts.removeValue(forKey: timeout)?.cancel()
    }

    /// libdbus changed `timeout` (enabled, interval): served anew.
    func toggleTimeout(_ timeout: OpaquePointer, fire: @escaping @Sendable (OpaquePointer) -> Void) {
        removeTimeout(timeout)
        addTimeout(timeout, fire: fire)
    }

    /// Stops serving everything (the connection is torn down).
    func cancelAll() {
        for sources in watches.values { sources.cancel() }
        watches.removeAll()
        for poller in pollers.values { poller.stop() }
        pollers.removeAll()
        for timer in timeouts.values { timer.cancel() }
        timeouts.removeAll()
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

