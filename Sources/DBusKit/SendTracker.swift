import Synchronization

/// Counts one connection's sends, so that ``BusConnection/flush(within:)`` knows whether
/// anything asked for is still unsent, and keeps the flush callers waiting for libdbus's
/// outgoing queue to empty.
///
/// A send is counted three times: when it is asked for (from any thread, before it is
/// enqueued: a call, an emit of signals, a reply to an incoming call, libdbus's own answer
/// to a Peer call), when the queue hands it to libdbus (or drops it: the connection closed),
/// and as written once libdbus has nothing left to write. Nothing is unsent when the written
/// count has caught up with the asked-for count. The connection tells it when libdbus is idle.
final class SendTracker {
    /// Sends asked for, from any thread.
    private let requested = Atomic<UInt64>(0)
    /// Sends handed to libdbus or dropped (queue only).
    private var handed: UInt64 = 0
    /// ``handed`` as it was when libdbus last had nothing left to write.
    private let written = Atomic<UInt64>(0)
    /// ``BusConnection/flush(within:)`` callers waiting for the outgoing queue to empty (queue only).
    private var waiters: [FlushWaiter] = []

    /// A send is asked for (any thread).
    func sendRequested() {
        requested.add(1, ordering: .sequentiallyConsistent)
    }

    /// Whether every send asked for has been handed to libdbus and written (any thread).
    var nothingUnsent: Bool {
        written.load(ordering: .sequentiallyConsistent) == requested.load(ordering: .sequentiallyConsistent)
    }

    /// A send asked for has been handed to libdbus, or dropped (queue only). `libdbusIdle`:
    /// libdbus has nothing left to write now.
    func sendHanded(libdbusIdle: Bool) {
        handed += 1
        if libdbusIdle { allWritten() }
    }

    /// libdbus has nothing left to write: what was handed to it is written (queue only).
    func allWritten() {
        written.store(handed, ordering: .sequentiallyConsistent)
    }

    /// Whether flush callers wait (queue only).
    var hasWaiters: Bool { !waiters.isEmpty }

    /// Keeps `waiter` until ``resumeWaiters()`` (queue only).
    func wait(_ waiter: FlushWaiter) {
        waiters.append(waiter)
    }

    /// Resumes every waiting flush caller: the outgoing queue is empty, or the connection
    /// ended (queue only).
    func resumeWaiters() {
        let resumed = waiters
        waiters.removeAll()
        for waiter in resumed { waiter.resume(flushed: true) }
    }
}

/// A ``BusConnection/flush(within:)`` caller: resumed once, by the write watch or its timer.
final class FlushWaiter: Sendable {
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
