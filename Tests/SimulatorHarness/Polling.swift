import Foundation

/// The test suites' one way to wait for a state that has no event of their own to await (a
/// counter in the library, the simulator's State): polls `condition` every `interval` until
/// it holds or `limit` has passed. The limit is a hang guard, not a time the state must be
/// reached in: a sanitizer run of the whole suite on two loaded cores takes many times what
/// a quiet machine does, and a condition that holds returns at once whatever the limit.
/// - Returns: whether the condition held.
public func eventually(within limit: Duration = .seconds(30), every interval: Duration = .milliseconds(5),
                       _ condition: () -> Bool) async -> Bool {
    _ = PoolWatch.started
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// As ``eventually(within:every:_:)``, for a condition that has to ask (a bus call, the
/// simulator's State); what the condition throws is thrown.
public func eventually(within limit: Duration = .seconds(30), every interval: Duration = .milliseconds(5),
                       _ condition: () async throws -> Bool) async throws -> Bool {
    _ = PoolWatch.started
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: interval)
    }
    return true
}

/// Watches the test process's cooperative pool from a thread of its own: every 250 ms it
/// enqueues a task and times how long the pool takes to run it, and writes to stderr when
/// that took over 2 s. A test that waits on the pool (for a process, a semaphore) stalls
/// every other test of the process; this names the stall in the log of the run that had it.
/// Started by the first ``eventually(within:every:_:)``.
enum PoolWatch {
    static let started: Void = {
        Thread.detachNewThread {
            while true {
                let ran = DispatchSemaphore(value: 0)
                let asked = ContinuousClock.now
                Task.detached { ran.signal() }
                if ran.wait(timeout: .now() + 3) == .timedOut {
                    if let out = ProcessInfo.processInfo.environment["POOLWATCH_GDB"] {
                        let p = Process()
                        p.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
                        p.arguments = ["-p", "\(getpid())", "-batch", "-ex", "thread apply all bt 40"]
                        let file = out + "." + String(Int(Date().timeIntervalSince1970))
                        FileManager.default.createFile(atPath: file, contents: nil)
                        p.standardOutput = FileHandle(forWritingAtPath: file)
                        try? p.run(); p.waitUntilExit()
                    }
                    ran.wait()
                }
                let took = ContinuousClock.now - asked
                if took > .seconds(2) {
                    FileHandle.standardError.write(Data("harness: the cooperative pool took \(took) to run a task\n".utf8))
                }
                usleep(250_000)
            }
        }
    }()
}
