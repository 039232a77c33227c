import DBusKit
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The `SOCK_SEQPACKET` socket BlueZ hands over with AcquireWrite or AcquireNotify
/// (bluez/src/gatt-client.c create_sock: one end of a non-blocking `socketpair`): one
/// datagram is one ATT value, whole.
///
/// Nothing here blocks a thread. Sending never waits inside the kernel (`MSG_DONTWAIT`); a
/// full socket is waited out by a Dispatch write source on the socket's own serial queue
/// (the kernel's POLLOUT), resumed into the waiting task, and a task cancelled or timed out
/// meanwhile resumes at once. Datagrams are received by a Dispatch read source on the same
/// queue. The descriptor is closed on that queue, after any source on it is cancelled (a
/// descriptor must not be closed under a live Dispatch source), by ``close()`` or when the
/// object goes away.
final class SeqPacketSocket: Sendable {
    /// Why a send, a wait or a receive ended.
    enum Failure: Error, Equatable {
        /// The socket was closed by us (``close()``).
        case closed
        /// The other end is gone (POLLHUP, EPIPE, ECONNRESET, end of file): BlueZ shuts the
        /// socket when the link drops.
        case hungUp
        /// No room within the time given.
        case timedOut
        /// Any other `errno`.
        case system(Int32)
    }

    private struct State {
        /// -1 once closed.
        var fd: Int32
        /// Sends waiting for room, by id.
        var waiters: [UInt64: OneShot<Void>] = [:]
        var nextID: UInt64 = 0
    }

    private let state: Lock<State>
    private let queue = DispatchQueue(label: "blectl.seqpacket")
    /// The Dispatch sources, touched only on `queue`.
    private let sources = QueueConfined()
    private let waits = Atomic<Int>(0)

    /// Takes the descriptor out of `descriptor` (which holds nothing afterwards).
    /// - Throws: ``Failure/closed`` when it holds none.
    init(taking descriptor: UnixFileDescriptor) throws(Failure) {
        guard let fd = descriptor.take() else { throw .closed }
        state = Lock(State(fd: fd))
    }

    deinit {
        let fd = state.withLock { $0.fd }
        if fd >= 0 {
            // Sources hold no reference to us (their handlers capture weakly), so any left
            // are cancelled here; the descriptor is closed after their cancel handlers.
            let sources = sources
            queue.async { sources.cancelAll { _ = Glibc.close(fd) } }
        }
    }

    /// How many times a send found the socket full and waited for room (back-pressure).
    var waitsForRoom: Int { waits.load(ordering: .relaxed) }

    var isClosed: Bool { state.withLock { $0.fd < 0 } }

    // MARK: - Sending

    /// Sends `datagram` whole, waiting while the socket is full (never dropping it, never
    /// spinning: a Dispatch write source wakes the wait when the kernel has room).
    /// - Parameter timeout: the longest wait for room; nil: no limit.
    /// - Throws: ``Failure`` (`hungUp` when BlueZ shut the socket, `timedOut`, `closed`,
    ///   `system`), `CancellationError`.
    func send(_ datagram: [UInt8], timeout: Duration?) async throws {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            switch sendNow(datagram) {
            case .sent: return
            case .failed(let failure): throw failure
            case .full:
                waits.add(1, ordering: .relaxed)
                try await waitForRoom(until: deadline)
            }
        }
    }

    private enum Attempt { case sent, full, failed(Failure) }

    /// One non-blocking `send`, under the lock (so the descriptor cannot be closed meanwhile).
    private func sendNow(_ datagram: [UInt8]) -> Attempt {
        state.withLock { state in
            guard state.fd >= 0 else { return .failed(.closed) }
            while true {
                let n = datagram.withUnsafeBytes { Glibc.send(state.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if n == datagram.count { return .sent }
                if n >= 0 { return .failed(.system(EMSGSIZE)) }     // a datagram goes whole or not at all
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK, ENOBUFS: return .full
                case EPIPE, ECONNRESET, ENOTCONN, ECONNREFUSED: return .failed(.hungUp)
                case let code: return .failed(.system(code))
                }
            }
        }
    }

    /// Waits until the kernel reports the socket writable (or hung up: the next send says so).
    private func waitForRoom(until deadline: ContinuousClock.Instant?) async throws {
        let timeout = deadline.map { max(.zero, $0 - .now) }
        try await withOneShot(timeout: timeout, timeoutError: { Failure.timedOut }) { (shot: OneShot<Void>) in
            let id: UInt64? = state.withLock { state in
                guard state.fd >= 0 else { return nil }
                state.nextID += 1
                state.waiters[state.nextID] = shot
                return state.nextID
            }
            guard let id else { shot.fail(Failure.closed); return }
            shot.onFinish { [weak self] in self?.removeWaiter(id) }
            queue.async { [weak self] in self?.armWriteSource() }
        }
    }

    private func removeWaiter(_ id: UInt64) {
        let last = state.withLock { state -> Bool in
            state.waiters[id] = nil
            return state.waiters.isEmpty
        }
        if last { queue.async { [weak self] in self?.disarmWriteSourceIfIdle() } }
    }

    /// Queue only: a write source while anyone waits for room.
    private func armWriteSource() {
        guard sources.write == nil else { return }
        let fd: Int32? = state.withLock { $0.fd >= 0 && !$0.waiters.isEmpty ? $0.fd : nil }
        guard let fd else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.writable() }
        sources.write = source
        source.activate()
    }

    /// Queue only: the kernel has room (or the other end hung up): every waiter tries again.
    private func writable() {
        let woken = state.withLock { state -> [OneShot<Void>] in
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        sources.write?.cancel()
        sources.write = nil
        for shot in woken { shot.succeed(()) }
    }

    private func disarmWriteSourceIfIdle() {
        guard state.withLock({ $0.waiters.isEmpty }) else { return }
        sources.write?.cancel()
        sources.write = nil
    }

    // MARK: - Draining

    /// Bytes sent but not yet taken by the other end (TIOCOUTQ: a Unix socket counts what
    /// its datagrams hold in the receiver's queue); nil once closed.
    func unreadBytes() -> Int? {
        state.withLock { state -> Int? in
            guard state.fd >= 0 else { return nil }
            var count: Int32 = 0
            return ioctl(state.fd, UInt(TIOCOUTQ), &count) == 0 ? Int(count) : 0
        }
    }

    /// Whether the other end has hung up (POLLHUP or POLLERR now).
    func hasHungUp() -> Bool {
        state.withLock { state -> Bool in
            guard state.fd >= 0 else { return true }
            var entry = pollfd(fd: state.fd, events: Int16(POLLOUT), revents: 0)
            return poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLHUP | POLLERR) != 0
        }
    }

    // MARK: - Receiving

    /// Delivers every datagram received, in order, to `onDatagrams` (a batch per wake-up, on
    /// the socket's queue), then once `onEnd` when the other end hangs up or fails (not after
    /// ``close()``). Call once.
    /// - Parameter maximumLength: the longest datagram expected; a longer one is cut there.
    func receive(maximumLength: Int, onDatagrams: @escaping @Sendable ([[UInt8]]) -> Void,
                 onEnd: @escaping @Sendable (Failure) -> Void) {
        queue.async { [weak self] in
            guard let self, let fd = state.withLock({ $0.fd >= 0 ? $0.fd : nil }) else { return }
            let buffer = ReceiveBuffer(capacity: max(1, maximumLength))
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [weak self] in
                guard let self else { return }
                let (datagrams, end) = readAvailable(into: buffer)
                if !datagrams.isEmpty { onDatagrams(datagrams) }
                if let end {
                    sources.read?.cancel()
                    sources.read = nil
                    onEnd(end)
                }
            }
            sources.read = source
            source.activate()
        }
    }

    /// Queue only: every datagram waiting now, and the end if the socket hung up.
    private func readAvailable(into buffer: ReceiveBuffer) -> ([[UInt8]], Failure?) {
        state.withLock { state -> ([[UInt8]], Failure?) in
            guard state.fd >= 0 else { return ([], nil) }
            var datagrams: [[UInt8]] = []
            while true {
                let n = buffer.bytes.withUnsafeMutableBytes { Glibc.recv(state.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 {
                    datagrams.append(Array(buffer.bytes[0..<n]))
                    continue
                }
                if n == 0 {
                    // End of file, or an empty datagram: only a hang-up ends it.
                    var entry = pollfd(fd: state.fd, events: Int16(POLLIN), revents: 0)
                    if poll(&entry, 1, 0) == 1 && entry.revents & Int16(POLLHUP | POLLERR) != 0 { return (datagrams, .hungUp) }
                    continue
                }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return (datagrams, nil)
                case ECONNRESET, EPIPE, ENOTCONN: return (datagrams, .hungUp)
                case let code: return (datagrams, .system(code))
                }
            }
        }
    }

    // MARK: - Closing

    /// Closes the socket (BlueZ then releases the characteristic): waiting sends fail with
    /// ``Failure/closed`` at once; the descriptor is closed on the socket's queue once its
    /// sources are cancelled. Later calls do nothing.
    func close() {
        let (fd, waiters) = state.withLock { state -> (Int32, [OneShot<Void>]) in
            defer { state.fd = -1; state.waiters.removeAll() }
            return (state.fd, Array(state.waiters.values))
        }
        guard fd >= 0 else { return }
        for shot in waiters { shot.fail(Failure.closed) }
        let sources = sources
        queue.async { sources.cancelAll { _ = Glibc.close(fd) } }
    }
}

/// The Dispatch sources of a socket: created, cancelled and released on its queue only.
private final class QueueConfined: @unchecked Sendable {
    var write: (any DispatchSourceWrite)?
    var read: (any DispatchSourceRead)?

    /// Cancels both sources and runs `then` after their cancel handlers (at once when none).
    func cancelAll(then: @escaping @Sendable () -> Void) {
        let live = [write as (any DispatchSourceProtocol)?, read].compactMap { $0 }
        write = nil
        read = nil
        guard !live.isEmpty else { then(); return }
        let remaining = Lock(live.count)
        for source in live {
            source.setCancelHandler {
                if remaining.withLock({ count -> Bool in count -= 1; return count == 0 }) { then() }
            }
            source.cancel()
        }
    }
}

/// One receive buffer per socket, used on its queue only.
private final class ReceiveBuffer: @unchecked Sendable {
    var bytes: [UInt8]
    init(capacity: Int) { bytes = [UInt8](repeating: 0, count: capacity) }
}
