// Child processes for the tests: posix_spawn with every signal at its default
// disposition and an empty signal mask (so SIGINT works even when the test runner
// ignores it), close-on-exec pipes (so one child's pipe never leaks into another),
// both output pipes drained on background threads (no deadlock on big outputs),
// and the real exit status, with death by signal reported as 128 + signal like a shell.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct ProcessResult: Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    /// True when the harness killed the process because it ran past its timeout.
    public let timedOut: Bool
}

public enum HarnessError: Error, CustomStringConvertible {
    case spawnFailed(String, Int32)
    case simulatorDidNotStart(String)
    case simctlFailed(String)
    case badJSON(String)

    public var description: String {
        switch self {
        case .spawnFailed(let what, let err): return "cannot start \(what): \(String(cString: strerror(err)))"
        case .simulatorDidNotStart(let why): return "simulator did not start: \(why)"
        case .simctlFailed(let why): return "simulator control call failed: \(why)"
        case .badJSON(let why): return "bad JSON from simulator: \(why)"
        }
    }
}

/// A running child process. Sendable: all mutable state is behind a lock.
public final class RunningProcess: @unchecked Sendable {
    public let pid: Int32
    private let cond = NSCondition()
    private var out = Data()
    private var err = Data()
    private var openReaders = 0
    private var exitStatus: Int32?
    private var stdinFD: Int32
    private var killedByTimeout = false

    fileprivate init(pid: Int32, stdinFD: Int32, stdoutFD: Int32?, stderrFD: Int32?) {
        self.pid = pid
        self.stdinFD = stdinFD
        if let fd = stdoutFD { startReader(fd, isErr: false) }
        if let fd = stderrFD { startReader(fd, isErr: true) }
    }

    private func startReader(_ fd: Int32, isErr: Bool) {
        cond.lock(); openReaders += 1; cond.unlock()
        Thread.detachNewThread { [self] in
            var buf = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buf.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                cond.lock()
                if isErr { err.append(contentsOf: buf[0..<n]) } else { out.append(contentsOf: buf[0..<n]) }
                cond.broadcast()
                cond.unlock()
            }
            close(fd)
            cond.lock(); openReaders -= 1; cond.broadcast(); cond.unlock()
        }
    }

    /// What the process has written to stdout so far.
    public var currentStdout: String { cond.lock(); defer { cond.unlock() }; return String(decoding: out, as: UTF8.self) }
    /// What the process has written to stderr so far.
    public var currentStderr: String { cond.lock(); defer { cond.unlock() }; return String(decoding: err, as: UTF8.self) }

    /// Raw stdout bytes so far (used to read the simulator's ADDRESS line).
    func stdoutData() -> Data { cond.lock(); defer { cond.unlock() }; return out }

    /// Waits until stdout contains `needle` or the timeout passes; true if found.
    public func waitForStdout(containing needle: String, timeout: Duration) -> Bool {
        waitFor(needle, inStderr: false, timeout: timeout)
    }

    /// Waits until stderr contains `needle` or the timeout passes; true if found.
    public func waitForStderr(containing needle: String, timeout: Duration) -> Bool {
        waitFor(needle, inStderr: true, timeout: timeout)
    }

    private func waitFor(_ needle: String, inStderr: Bool, timeout: Duration) -> Bool {
        let deadline = Deadline(after: timeout)
        cond.lock(); defer { cond.unlock() }
        while true {
            if String(decoding: inStderr ? err : out, as: UTF8.self).contains(needle) { return true }
            if openReaders == 0 || deadline.hasPassed { return false }
            _ = cond.wait(until: Date().addingTimeInterval(0.05))
        }
    }

    public func sendSignal(_ signal: Int32) {
        cond.lock(); let done = exitStatus != nil; cond.unlock()
        if !done { kill(pid, signal) }
    }

    /// Whether `signal` is pending in the process: sent, and not yet taken by it (in the
    /// process's shared pending set, /proc/PID/status ShdPnd, or a thread's own, SigPnd).
    /// nil once the process has ended.
    public func isPending(_ signal: Int32) -> Bool? {
        guard poll() == nil, let shared = Self.signalMask("ShdPnd", in: "/proc/\(pid)/status") else { return nil }
        var pending = shared
        for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            pending |= Self.signalMask("SigPnd", in: "/proc/\(pid)/task/\(task)/status") ?? 0
        }
        return pending & (UInt64(1) << UInt64(signal - 1)) != 0
    }

    /// Waits until the process has taken `signal` sent with ``sendSignal(_:)``, or has ended.
    /// Send a second signal only after this, so that it is a second one: two signals pending
    /// together have no order (blectl took SIGINT and SIGTERM sent back to back as SIGTERM
    /// first in one run in three), and two of a kind are one.
    ///
    /// Taken means no longer pending, seen twice 1 ms apart: in a Swift program on Linux the
    /// main thread waits in sigsuspend and takes the signal first, in Dispatch's handler,
    /// which sends it on to Dispatch's thread, where it is pending again until the signal
    /// source reads it; one look could fall between the two.
    /// - Returns: false when `signal` is still pending after `timeout`.
    public func waitUntilTaken(_ signal: Int32, timeout: Duration) -> Bool {
        let deadline = Deadline(after: timeout)
        var clearLooks = 0
        while clearLooks < 2 {
            guard let pending = isPending(signal) else { return true }
            clearLooks = pending ? 0 : clearLooks + 1
            if pending && deadline.hasPassed { return false }
            usleep(1000)
        }
        return true
    }

    /// The hexadecimal signal set on the line `name:` of a /proc status file.
    private static func signalMask(_ name: String, in path: String) -> UInt64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    /// Closes the child's stdin (when it has a pipe there).
    public func closeStdin() {
        cond.lock(); let fd = stdinFD; stdinFD = -1; cond.unlock()
        if fd >= 0 { close(fd) }
    }

    /// Writes to the child's stdin pipe (when it has one).
    public func writeStdin(_ s: String) {
        writeStdin(bytes: Array(s.utf8))
    }

    /// Writes raw bytes to the child's stdin pipe (when it has one), all of them (blocking
    /// while the pipe is full) unless the child closes its end.
    public func writeStdin(bytes: [UInt8]) {
        cond.lock(); let fd = stdinFD; cond.unlock()
        guard fd >= 0 else { return }
        var bytes = bytes
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            off += n
        }
    }

    /// Non-blocking: the shell-style status if the process has ended.
    public func poll() -> Int32? {
        cond.lock(); defer { cond.unlock() }
        if let s = exitStatus { return s }
        var st: Int32 = 0
        let r = waitpid(pid, &st, WNOHANG)
        if r == pid {
            exitStatus = shellStatus(st)
            LiveChildren.remove(pid)
        }
        return exitStatus
    }

    /// Waits for the end (killing it with SIGKILL at the timeout), then for both pipes
    /// to reach EOF (at most 2 s more, in case a grandchild holds them open).
    public func wait(timeout: Duration? = nil) -> ProcessResult {
        let deadline = timeout.map { Deadline(after: $0) }
        while poll() == nil {
            if let deadline, deadline.hasPassed {
                kill(pid, SIGKILL)
                cond.lock(); killedByTimeout = true; cond.unlock()
                var st: Int32 = 0
                while true {
                    let r = waitpid(pid, &st, 0)
                    if r == pid { cond.lock(); exitStatus = shellStatus(st); cond.unlock(); LiveChildren.remove(pid); break }
                    if r < 0 && errno != EINTR { cond.lock(); if exitStatus == nil { exitStatus = 137 }; cond.unlock(); break }
                }
                break
            }
            usleep(2000)
        }
        closeStdin()
        let drainDeadline = Deadline(after: .seconds(2))
        cond.lock()
        while openReaders > 0 && !drainDeadline.hasPassed { _ = cond.wait(until: Date().addingTimeInterval(0.05)) }
        let result = ProcessResult(status: exitStatus ?? -1,
                                   stdout: String(decoding: out, as: UTF8.self),
                                   stderr: String(decoding: err, as: UTF8.self),
                                   timedOut: killedByTimeout)
        cond.unlock()
        return result
    }
}

/// Runs `body` on a thread of its own: the harness blocks (waitpid, usleep, control calls),
/// and blocking the few cooperative threads would serialize the whole suite.
public func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

func shellStatus(_ st: Int32) -> Int32 {
    let sig = st & 0x7f
    if sig == 0 { return (st >> 8) & 0xff }     // exited
    return 128 + sig                             // killed by a signal
}

extension Duration {
    var seconds: TimeInterval {
        let c = components
        return TimeInterval(c.seconds) + TimeInterval(c.attoseconds) / 1e18
    }
}

/// Runs `executable` with `args` to its end (SIGKILL after `timeout`, a hang guard), stdin
/// /dev/null, stdout and stderr read in full: for tests that run programs without a simulator.
public func runToEnd(_ executable: String, _ args: [String], environment: [String: String],
                     timeout: Duration = .seconds(60)) throws -> ProcessResult {
    try spawnChild(executable, args, environment: environment, stdinPipe: false).wait(timeout: timeout)
}

/// Starts `executable` (a path, or a name looked up in PATH) with `args`.
/// stdin: a pipe when `stdinPipe`, else /dev/null. stdout/stderr: pipes, or the
/// parent's stderr for stderr when `inheritStderr`.
func spawnChild(_ executable: String, _ args: [String], environment: [String: String],
                stdinPipe: Bool, inheritStderr: Bool = false) throws -> RunningProcess {
    func makePipe() throws -> (r: Int32, w: Int32) {
        var fds: [Int32] = [-1, -1]
        // Close-on-exec at once, so no other child (of this or another thread) keeps
        // e.g. the simulator's stdin open.
        let rc = pipe(&fds)
        if rc == 0 { _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC); _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC) }
        if rc != 0 { throw HarnessError.spawnFailed(executable, errno) }
        return (fds[0], fds[1])
    }
    let inP = stdinPipe ? try makePipe() : nil
    let outP = try makePipe()
    let errP = inheritStderr ? nil : try makePipe()

    #if canImport(Glibc)
    var fa = posix_spawn_file_actions_t()
    var attr = posix_spawnattr_t()
    #else
    var fa: posix_spawn_file_actions_t? = nil
    var attr: posix_spawnattr_t? = nil
    #endif
    posix_spawn_file_actions_init(&fa)
    posix_spawnattr_init(&attr)
    defer { posix_spawn_file_actions_destroy(&fa); posix_spawnattr_destroy(&attr) }
    if let p = inP { posix_spawn_file_actions_adddup2(&fa, p.r, 0) } else {
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)
    }
    posix_spawn_file_actions_adddup2(&fa, outP.w, 1)
    if let p = errP { posix_spawn_file_actions_adddup2(&fa, p.w, 2) }
    // Every signal back to its default disposition, nothing blocked.
    var all = sigset_t(); sigfillset(&all)
    var none = sigset_t(); sigemptyset(&none)
    posix_spawnattr_setsigdefault(&attr, &all)
    posix_spawnattr_setsigmask(&attr, &none)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + args).map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { argv.forEach { free($0) }; envp.forEach { free($0) } }

    var pid: pid_t = 0
    let rc: Int32
    if executable.contains("/") {
        rc = posix_spawn(&pid, executable, &fa, &attr, argv, envp)
    } else {
        // Look the name up in the child's PATH (not the parent's).
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        var resolved = executable
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(executable)"
            if access(candidate, X_OK) == 0 { resolved = candidate; break }
        }
        rc = posix_spawn(&pid, resolved, &fa, &attr, argv, envp)
    }
    // The parent keeps only its ends.
    if let p = inP { close(p.r) }
    close(outP.w)
    if let p = errP { close(p.w) }
    if rc != 0 {
        if let p = inP { close(p.w) }
        close(outP.r)
        if let p = errP { close(p.r) }
        throw HarnessError.spawnFailed(executable, rc)
    }
    LiveChildren.add(pid)
    return RunningProcess(pid: pid, stdinFD: inP?.w ?? -1, stdoutFD: outP.r, stderrFD: errP?.r)
}

/// A point on the monotonic clock (CLOCK_MONOTONIC, the clock blectl's own timers run on):
/// the harness's timeouts must not fire because the wall clock was stepped. A VM paused and
/// resumed (a snapshot) stepped it by tens of seconds under `make test-tsan`, and every child
/// being waited for then "timed out" at once, killed with SIGKILL (137) mid-run.
public struct Deadline: Sendable {
    private let instant: SuspendingClock.Instant

    public init(after timeout: Duration) {
        instant = SuspendingClock.now + timeout
    }

    public var hasPassed: Bool { SuspendingClock.now >= instant }
}
