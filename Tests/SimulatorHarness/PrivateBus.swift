// A bare private dbus-daemon (sim/bus.conf: anyone may own any name and send anything),
// for tests that play bluetoothd themselves.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

public final class PrivateBus: @unchecked Sendable {
    /// The bus address (`unix:path=...`).
    public let address: String
    /// The dbus-daemon's process id.
    public var pid: Int32 { process.pid }
    private let process: RunningProcess

    private init(address: String, process: RunningProcess) {
        self.address = address
        self.process = process
    }

    /// Starts `dbus-daemon --config-file sim/bus.conf --print-address` and waits (30 s at
    /// most) for its address.
    public static func start() throws -> PrivateBus { try launch() }

    private static func launch() throws -> PrivateBus {
        let dir = NSTemporaryDirectory() + "blectl-bus-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let config = Simulator.defaultRepoRoot.appendingPathComponent("sim/bus.conf").path
        let process = try spawnChild("dbus-daemon", ["--config-file", config, "--print-address", "--nofork", "--address", "unix:dir=" + dir],
                                     environment: ProcessInfo.processInfo.environment, stdinPipe: false)
        guard process.waitForStdout(containing: "\n", timeout: .seconds(30)),
              let line = process.currentStdout.split(separator: "\n").first else {
            process.sendSignal(SIGKILL)
            throw HarnessError.simulatorDidNotStart("dbus-daemon printed no address")
        }
        return PrivateBus(address: String(line), process: process)
    }

    /// ``start()`` waited for on a thread of its own, not on the cooperative pool (what an
    /// async test gets: see Simulator+Async.swift).
    public static func start() async throws -> PrivateBus {
        try await offThread { try launch() }
    }

    deinit { kill() }

    /// Stops the daemon (SIGSTOP): it reads and writes nothing until ``resume()``.
    public func pause() { process.sendSignal(SIGSTOP) }

    /// Lets a paused daemon run again (SIGCONT).
    public func resume() { process.sendSignal(SIGCONT) }

    /// Ends the daemon at once (SIGKILL): every connection to it sees a hang-up.
    public func kill() {
        guard process.poll() == nil else { return }
        process.sendSignal(SIGKILL)
        _ = process.wait(timeout: .seconds(3))
    }
}
