import Dispatch

/// A task executor that runs jobs on a connection's serial queue, the thread that reads the
/// socket, dispatches messages and runs signal handlers (``BusConnection/taskExecutor``).
///
/// A task that consumes what the handlers produce (`withTaskExecutorPreference`) is then
/// resumed on the queue, right after the handler that resumed it, instead of waking a thread
/// of the cooperative pool for every batch: one thread hand-off less per message received,
/// which is most of what a stream of small signals costs (issue 12: a notification stream,
/// a discovery fed by a live bus). Work run this way holds up every message behind it, so it
/// must not block: no blocking I/O, no waiting on a lock held across I/O; suspending (`await`)
/// frees the queue.
final class QueueTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(queue: DispatchQueue) { self.queue = queue }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
