// The children the harness has spawned and not yet reaped. A private bus or simulator that a
// test keeps for the whole run (in a static, or leaked) is never deinitialised, so when the
// test process exits, its dbus-daemon would outlive it, reparented to init, holding every
// descriptor it inherited (a lock a script holds around `make test`, among others). At
// exit, each child still running is killed.

import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum LiveChildren {
    /// nil until the first child: the exit handler is installed then.
    private static let pids = Mutex<Set<pid_t>?>(nil)

    /// Records a child just spawned.
    static func add(_ pid: pid_t) {
        let first = pids.withLock { pids in
            let first = pids == nil
            pids = (pids ?? []).union([pid])
            return first
        }
        if first { atexit { LiveChildren.killAll() } }
    }

    /// Forgets a child that has been reaped (its pid may go to another process).
    static func remove(_ pid: pid_t) {
        _ = pids.withLock { $0?.remove(pid) }
    }

    /// SIGKILLs every child not reaped.
    static func killAll() {
        for pid in pids.withLock({ $0 ?? [] }) { kill(pid, SIGKILL) }
    }
}

/// Runs `executable` (a path, or a name looked up in the environment's PATH) to its end, or
/// kills it at `timeout`; its output captured.
public func runChild(_ executable: String, _ args: [String], environment: [String: String],
                     timeout: Duration) throws -> ProcessResult {
    try spawnChild(executable, args, environment: environment, stdinPipe: false).wait(timeout: timeout)
}
