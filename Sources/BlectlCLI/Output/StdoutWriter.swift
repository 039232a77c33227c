#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes results to stdout on a thread of its own, so that a reader that stops reading
/// (`blectl scan --updates | slow-consumer`, a paused pipeline) never holds up the command:
/// the scan still ends at its timeout, discovery is still stopped, and a signal still
/// cleans up at once. Only the writer thread ever blocks in write(2); a caller writes itself
/// only what cannot block (see ``writtenDirectly(_:)``).
///
/// While nothing is queued and stdout is a pipe with room, a batch of at most `PIPE_BUF` bytes is written at once by the task that
/// queues it (no thread hand-off per line). Otherwise lines are queued whole; the thread takes everything queued at once and writes it in pieces of at most `PIPE_BUF` bytes
/// cut at line ends (a pipe takes such a write whole or not at all), so a process that ends
/// while the reader is stalled leaves only complete lines behind (lines longer than
/// `PIPE_BUF` excepted). The queue has no limit and producers never wait for the reader:
/// what blectl has received is queued until it is written, whatever the pace of the reader
/// (the man page's promise for `notify` and `scan`). A producer that waited would only move
/// the backlog into its source's buffer (BlueZ does not slow down), where the timeout or
/// `--count` would then find values received but never written.
/// A stdout left non-blocking (O_NONBLOCK, by whoever shares the open file) answers EAGAIN
/// when full: the thread then waits in poll(2) for POLLOUT, as a blocking write would.
/// The one instance lives as long as the process.
final class StdoutWriter: @unchecked Sendable {
    static let shared = StdoutWriter(fd: 1)

    private let fd: Int32
    /// stdout is a pipe (FIFO): small writes can be made without blocking when it polls writable.
    private let isPipe: Bool
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [[UInt8]] = []       // chunks of whole lines, oldest first
    private var queued = 0                  // bytes in `queue` plus the chunk being written
    private var failure: (any Error)?       // OutputClosed (EPIPE: the reader is gone) or OutputFailed
    private var started = false
    private var waiters: [UInt64: Waiter] = [:]
    private var nextWaiter: UInt64 = 0

    private struct Waiter {
        let limit: Int                      // resume once `queued <= limit` (or closed)
        let continuation: CheckedContinuation<Void, any Error>
    }

    init(fd: Int32) {
        self.fd = fd
        var status = stat()
        isPipe = fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(wake, nil)
    }

    /// Queues `text` (whole lines) for stdout, without waiting for the reader.
    /// - Throws: ``OutputClosed`` once a write found the reader gone, ``OutputFailed`` once a
    ///   write failed otherwise (ENOSPC, EIO).
    func enqueue(_ text: String) async throws {
        try await enqueue(utf8: Array(text.utf8))
    }

    /// As ``enqueue(_:)``, for lines already in UTF-8.
    func enqueue(utf8 bytes: [UInt8]) async throws {
        let outcome: Result<Void, any Error> = withLock {
            if let failure { return .failure(failure) }
            if writtenDirectly(bytes) { return failure.map { .failure($0) } ?? .success(()) }
            startIfNeeded()
            queue.append(bytes)
            queued += bytes.count
            pthread_cond_signal(wake)
            return .success(())
        }
        try outcome.get()
    }

    /// Waits until everything queued is written.
    /// - Throws: ``OutputClosed`` when the reader went away with lines still queued,
    ///   ``OutputFailed`` when a write failed otherwise; `CancellationError` when cancelled first.
    func drain() async throws {
        try await wait(untilQueuedAtMost: 0)
    }

    /// Like ``drain()``, but gives up silently after `limit` (used on the way out after a
    /// signal: what is written is whole, what is not is dropped).
    func drain(within limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await self.drain() }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    private func wait(untilQueuedAtMost limit: Int) async throws {
        let id: UInt64 = withLock { nextWaiter += 1; return nextWaiter }
        // The writer thread held the lock before resuming: ordered after it (DBusKit's
        // Lock.synchronize says why).
        defer { withLock {} }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = withLock {
                    if let failure { return .failure(failure) }
                    if queued <= limit { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    waiters[id] = Waiter(limit: limit, continuation: continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            let waiter = withLock { waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Writes `bytes` at once, from the caller's thread, when that cannot block: stdout is a
    /// pipe that takes a write (POLLOUT: a free buffer slot), nothing is queued or being
    /// written (order), and `bytes` is at most `PIPE_BUF` (a pipe takes such a write whole,
    /// into that slot). Saves the writer thread's wake-up per batch of `scan` lines
    /// (a thread hand-off per small batch dominated the scan's CPU). Under the lock,
    /// so the writer thread cannot start a write meanwhile. Returns whether it wrote (a
    /// failure is recorded as the thread's would be).
    private func writtenDirectly(_ bytes: [UInt8]) -> Bool {
        guard isPipe, queued == 0, !bytes.isEmpty, bytes.count <= Self.pipeBuffer else { return false }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, 0) == 1, descriptor.revents & Int16(POLLOUT) != 0,
              descriptor.revents & Int16(POLLERR | POLLHUP) == 0 else { return false }
        let error = StatusLine.shared.withLineErased(toStdout: true) {
            Printer.writeAll(bytes, to: fd, piecesOf: Self.pipeBuffer)
        }
        if let error { failure = error == EPIPE ? OutputClosed() : OutputFailed(errno: error) }
        return true
    }

    /// PIPE_BUF on Linux: a pipe takes a write of at most this many bytes whole or not at all.
    static let pipeBuffer = 4096

    /// Under the lock.
    private func startIfNeeded() {
        guard !started else { return }
        started = true
        let thread = UnsafeMutablePointer<pthread_t>.allocate(capacity: 1)
        defer { thread.deallocate() }
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(thread, nil, { context in
            Unmanaged<StdoutWriter>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        pthread_detach(thread.pointee)
    }

    private func run() {
        while true {
            // Everything queued goes in one buffer: a producer that queues line by line (a
            // notification stream) costs one write(2) per PIPE_BUF, not one per line.
            let chunk: [UInt8] = withLock {
                while queue.isEmpty { pthread_cond_wait(wake, mutex) }
                if queue.count == 1 { return queue.removeFirst() }
                var all: [UInt8] = []
                all.reserveCapacity(queue.reduce(0) { $0 + $1.count })
                for piece in queue { all.append(contentsOf: piece) }
                queue.removeAll(keepingCapacity: true)
                return all
            }
            let error = StatusLine.shared.withLineErased(toStdout: true) {
                Printer.writeAll(chunk, to: fd, piecesOf: Self.pipeBuffer)
            }
            let (ready, failed): ([CheckedContinuation<Void, any Error>], (any Error)?) = withLock {
                queued -= chunk.count
                if let error {
                    self.failure = error == EPIPE ? OutputClosed() : OutputFailed(errno: error)
                    queue.removeAll()
                    queued = 0
                }
                let failed = self.failure
                let due = waiters.filter { failed != nil || queued <= $0.value.limit }
                for id in due.keys { waiters.removeValue(forKey: id) }
                return (due.values.map(\.continuation), failed)
            }
            for continuation in ready {
                if let failed { continuation.resume(throwing: failed) } else { continuation.resume() }
            }
        }
    }

    private func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
