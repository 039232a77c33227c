import Synchronization

/// A connection's calls still awaiting their replies, counted from any thread, and whether its
/// read thread is asleep coalescing a signal stream (``ReadPoller/Coalescing``): the thread
/// never goes to sleep while a reply is awaited, and a call made while it sleeps wakes it, so
/// that no reply waits for a sleep.
///
/// A call counts from the moment it is sent (``callSent()``, on the caller's thread, before the
/// connection's queue registers it) until its outcome is delivered or it is given up
/// (``settled(_:)``, on the queue). The two sides need no lock: the sleeper marks itself
/// asleep and then reads the count, a sender raises the count and then (on the queue) reads
/// the mark, all sequentially consistent, so at least one of them sees the other.
final class ReplyWatch: Sendable {
    private let awaited = Atomic<Int>(0)
    private let sleeping = Atomic<Bool>(false)

    /// Calls sent whose outcome has not been delivered.
    var count: Int { awaited.load(ordering: .sequentiallyConsistent) }

    /// Whether the read thread is in ``sleepUnlessAwaited(_:)`` now (about to sleep, or asleep).
    var isSleeping: Bool { sleeping.load(ordering: .sequentiallyConsistent) }

    /// A call is being sent (any thread).
    func callSent() { awaited.add(1, ordering: .sequentiallyConsistent) }

    /// `calls` calls had their outcome delivered or were given up (the connection's queue).
    func settled(_ calls: Int = 1) { awaited.subtract(calls, ordering: .sequentiallyConsistent) }

    /// Runs `sleep` (which must end early when the read thread is woken) unless a reply is
    /// awaited; returns whether it ran. The read thread only.
    @discardableResult
    func sleepUnlessAwaited(_ sleep: () -> Void) -> Bool {
        sleeping.store(true, ordering: .sequentiallyConsistent)
        defer { sleeping.store(false, ordering: .sequentiallyConsistent) }
        guard count == 0 else { return false }
        sleep()
        return true
    }
}
