// The children the harness has spawned and not yet reaped. A private bus or simulator that a
// test keeps for the whole run (in a static, or leaked) is never deinitialised, so when the
// test process exits, its dbus-daemon would outlive it, reparented to init, holding every
// descriptor it inherited (a lock a script holds around `make test`, among others). At
// exit, each child still running is killed.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum LiveChildren {
    /// A pthread mutex (NSLock), which ThreadSanitizer sees, unlike `Mutex`'s futex.
    private static let lock = NSLock()
    /// nil until the first child: the exit handler is installed then. Guarded by `lock`.
    nonisolated(unsafe) private static var pids: Set<pid_t>?

    /// Records a child just spawned.
    static func add(_ pid: pid_t) {
        let first = lock.withLock {
            let first = pids == nil
            pids = (pids ?? []).union([pid])
            return first
        }
        if first { atexit { LiveChildren.killAll() } }
    }

    /// Forgets a child that has been reaped (its pid may go to another process).
    static func remove(_ pid: pid_t) {
        _ = lock.withLock { pids?.remove(pid) }
    }

    /// SIGKILLs every child not reaped.
    static func killAll() {
        for pid in lock.withLock({ pids ?? [] }) { kill(pid, SIGKILL) }
    }
}

/// Runs `executable` (a path, or a name looked up in the environment's PATH) to its end, or
/// kills it at `timeout`; its output captured.
public func runChild(_ executable: String, _ args: [String], environment: [String: String],
                     timeout: Duration) throws -> ProcessResult {
    try spawnChild(executable, args, environment: environment, stdinPipe: false).wait(timeout: timeout)
}

/// Starts `executable` (a path, or a name looked up in the environment's PATH) and returns at
/// once, its output captured, stdin /dev/null: a process no simulator owns (a broker several
/// simulators' runs share). The caller ends it (``RunningProcess/sendSignal(_:)``, then
/// `wait`); one left running is SIGKILLed when the test process exits.
public func launchChild(_ executable: String, _ args: [String], environment: [String: String]) throws -> RunningProcess {
    try spawnChild(executable, args, environment: environment, stdinPipe: false)
}
