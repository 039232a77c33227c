import Synchronization
internal import CDBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread of its own that waits in poll(2) for a connection's socket to become readable and
/// then runs `onReadable` (which enters the connection's queue with `sync`, so the turn runs
/// on this thread).
///
/// Why not a Dispatch read source: libdispatch waits for every source on its manager thread
/// (epoll) and hands each event to a worker thread for the queue, two thread wake-ups per
/// batch received, and a stream of small signals (a live discovery, a notification stream)
/// paid several context switches per message where a C client that reads on the thread that
/// waited pays one (BENCHMARKS.md, "Mechanisms kept for speed"). Here the thread that waited reads, dispatches, runs the signal handlers
/// and the consumers that prefer ``BusConnection/taskExecutor``.
///
/// It watches a duplicate of the socket (closed when the thread ends), for the reason
/// ``BusConnection`` gives for its write sources. Stopping never waits for the thread: it may
/// be in the middle of a turn on the queue that is asking it to stop.
///
/// A dense stream of small turns is read in batches (``Coalescing``): after a turn of a few
/// signals whose data came within the window, the thread sleeps the window before it polls
/// again, so that what arrives meanwhile is read, dispatched and handed to its consumers in
/// one turn. Each turn costs a wake-up, a queue entry, the handlers' and consumers' fixed work
/// and several system calls; a live discovery woke once per one or two signals.
/// The thread never sleeps while a call awaits its reply, and a call made while it sleeps
/// wakes it (``ReplyWatch``).
final class ReadPoller: Sendable {
    /// When to sleep before polling again. A pure policy, so that it is tested apart.
    struct Coalescing: Sendable, Equatable {
        /// How long to sleep after a small turn in a dense stream; zero turns coalescing off.
        let window: Duration
        /// A turn of fewer signals than this, whose data came within the window, starts
        /// coalescing: the stream is dense and its turns are small.
        static let smallTurn = 4
        /// While coalescing, a turn of this many signals or more ends it: the stream fills
        /// turns by itself (a backlog being drained, a burst), and a sleep would only cost a
        /// timer and a wake-up.
        static let fullTurn = 32
        /// Whether the last turn was followed by a sleep.
        private(set) var isCoalescing = false

        init(window: Duration) { self.window = window }

        /// After a turn: the time to sleep before polling again, or nil to poll at once.
        /// - Parameters:
        ///   - waited: how long poll(2) waited for the data this turn read.
        ///   - turn: what the turn dispatched. A turn that received a method call (bluetoothd
        ///     asking an exported agent) is not followed by a sleep: the conversation goes on.
        mutating func linger(afterWaiting waited: Duration, turn: Turn) -> Duration? {
            let dense = window > .zero && turn.callsReceived == 0 && waited < window && turn.signals > 0
            isCoalescing = dense && turn.signals < (isCoalescing ? Self.fullTurn : Self.smallTurn)
            return isCoalescing ? window : nil
        }

        /// The sleep ``linger(afterWaiting:turn:)`` asked for was not taken (a reply is
        /// awaited): coalescing ends, and only a small turn starts it again.
        mutating func sleepSkipped() { isCoalescing = false }
    }

    /// What a turn dispatched, as the poller needs it.
    struct Turn: Sendable, Equatable {
        /// Signals.
        var signals: Int
        /// Method calls to this connection's exported objects.
        var callsReceived: Int
    }

    private struct State {
        var enabled = false
        var stopped = false
    }
    private let state = Lock(State())
    /// Our duplicate of the socket; closed by the thread when it ends.
    private let fd: Int32
    /// An eventfd, written to wake the thread when ``state`` changes; closed by the thread when it ends.
    private let wakeFD: Int32
    /// Runs a turn.
    private let onReadable: @Sendable () -> Turn
    /// The policy the thread starts with (its state then lives on the thread).
    private let coalescing: Coalescing
    /// The connection's calls awaiting replies: no sleep while there are any.
    private let replies: ReplyWatch
    /// The polling thread, once it has started (to skip the wake-up when it changes its own state).
    private let thread = Atomic<UInt>(0)

    /// Starts the thread. Returns nil when the descriptor cannot be duplicated or the thread
    /// cannot be made (the caller then falls back to a Dispatch source).
    init?(socket: Int32, enabled: Bool, coalescing: Coalescing, replies: ReplyWatch,
          onReadable: @escaping @Sendable () -> Turn) {
        let duplicate = fcntl(socket, F_DUPFD_CLOEXEC, 0)
        guard duplicate >= 0 else { return nil }
        let wake = cdbus_wake_eventfd()
        guard wake >= 0 else {
            _ = close(duplicate)
            return nil
        }
        fd = duplicate
        wakeFD = wake
        self.onReadable = onReadable
        self.coalescing = coalescing
        self.replies = replies
        state.withLock { $0.enabled = enabled }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        guard pthread_create(&handle, &attributes, { context in
            Unmanaged<ReadPoller>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context) == 0 else {
            Unmanaged<ReadPoller>.fromOpaque(context).release()
            _ = close(duplicate)
            _ = close(wake)
            return nil
        }
    }

    /// libdbus turned the watch on or off (`dbus_watch_get_enabled`).
    func setEnabled(_ on: Bool) {
        let changed = state.withLock { state -> Bool in
            defer { state.enabled = on }
            return state.enabled != on
        }
        if changed { wake() }
    }

    /// Ends the thread after its current turn; never waits for it.
    func stop() {
        let changed = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if changed { wake() }
    }

    private func wake() {
        guard thread.load(ordering: .acquiring) != UInt(bitPattern: Int(bitPattern: pthread_self())) else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// The name the thread carries (`top -H`, `/proc/<pid>/task/<tid>/comm`).
    static let threadName = "blectl-dbus-rd"

    private func run() {
        cdbus_name_thread(Self.threadName)
        thread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
        defer {
            _ = close(fd)
            _ = close(wakeFD)
        }
        var coalescing = self.coalescing
        var descriptors = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        while true {
            let (enabled, stopped) = state.withLock { ($0.enabled, $0.stopped) }
            if stopped { return }
            // A disabled watch is left out (a negative descriptor is ignored by poll), else a
            // hang-up, reported whatever the events asked, would spin.
            descriptors[0].fd = enabled ? fd : -1
            descriptors[0].revents = 0
            descriptors[1].revents = 0
            let began = ContinuousClock.now
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 {
                var count: UInt64 = 0
                _ = read(wakeFD, &count, 8)
            }
            if descriptors[0].revents != 0, !state.withLock({ $0.stopped }) {
                let waited = ContinuousClock.now - began
                let turn = onReadable()
                if let linger = coalescing.linger(afterWaiting: waited, turn: turn) {
                    if !replies.sleepUnlessAwaited({ sleep(for: linger) }) { coalescing.sleepSkipped() }
                }
            }
        }
    }

    /// Sleeps `duration`, or less when the thread is woken (a call sent, a stop, a change of
    /// the watch): the wake-up stays written, for the poll that follows to read.
    private func sleep(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        _ = cdbus_wait_readable(wakeFD, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// Ends a sleep after a turn now (a call was sent: its reply must not wait for it).
    func interruptSleep() { wake() }
}
