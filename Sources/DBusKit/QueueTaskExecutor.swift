import Dispatch

/// A task executor that runs jobs on a connection's serial queue, the thread that reads the
/// socket, dispatches messages and runs signal handlers (``BusConnection/taskExecutor``).
///
/// A task that consumes what the handlers produce (`withTaskExecutorPreference`) is then
/// resumed on the queue, right after the handler that resumed it, instead of waking a thread
/// of the cooperative pool for every batch: one thread hand-off less per message received,
/// which is most of what a stream of small signals costs (a notification stream, a discovery
/// fed by a live bus; BENCHMARKS.md, "Mechanisms kept for speed"). Work run this way holds up every message behind it, so it
/// must not block: no blocking I/O, no waiting on a lock held across I/O; suspending (`await`)
/// frees the queue.
///
/// Jobs enqueued inside ``collectingJobs(_:)`` (the read poller's turn on the queue) run at the
/// end of that turn, on the same thread: a `queue.async` there would hand them to a Dispatch
/// worker, a thread wake-up per batch.
final class QueueTaskExecutor: TaskExecutor, @unchecked Sendable {
    private let queue: DispatchQueue
    /// Marks ``queue`` (this executor's own key: the connection has its own).
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    // Confined to `queue`.
    private var collecting = false
    private var collected: [UnownedJob] = []

    init(queue: DispatchQueue) {
        self.queue = queue
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if DispatchQueue.getSpecific(key: Self.queueKey) == ObjectIdentifier(self), collecting {
            collected.append(job)
            return
        }
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Runs `body`, then every job enqueued meanwhile (and by those jobs), in order, before
    /// returning. Queue only; not reentrant.
    func collectingJobs(_ body: () -> Void) {
        collecting = true
        defer { collecting = false }
        body()
        runCollected()
    }

    /// Runs the jobs collected so far, and those they enqueue. Queue only, while collecting.
    func runCollected() {
        while !collected.isEmpty {
            let jobs = collected
            collected.removeAll(keepingCapacity: true)
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
