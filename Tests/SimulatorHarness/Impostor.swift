// A client that speaks for bluetoothd without being it (sim/impostor): unicast signals,
// claiming to be BlueZ's, sent every few milliseconds to every other client on the
// simulator's bus, until stopped.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A running sim/impostor. Stopped by ``stop()`` or, at the latest, by deinit (SIGKILL), and
/// by EOF on its stdin should the test process die.
public final class Impostor: Sendable {
    /// What the impostor did, printed by it when it stops.
    public struct Report: Sendable, Decodable, Equatable {
        /// Rounds of ListNames + signals.
        public let rounds: Int
        /// Signals sent, all rounds and destinations together.
        public let signals: Int
        /// Every unique name it sent signals to.
        public let destinations: [String]
    }

    /// The impostor's own unique bus name (the sender of its signals).
    public let uniqueName: String
    private let process: RunningProcess

    fileprivate init(uniqueName: String, process: RunningProcess) {
        self.uniqueName = uniqueName
        self.process = process
    }

    deinit {
        process.sendSignal(SIGKILL)
        _ = process.wait(timeout: .seconds(2))
    }

    /// Waits until a report it printed names `uniqueName` among its destinations (it prints
    /// one on each new destination): true once it has sent its claims there, false after
    /// `timeout` (a guard against a hang only).
    public func waitUntilReached(_ uniqueName: String, timeout: Duration) -> Bool {
        process.waitForStdout(containing: "\"\(uniqueName)\"", timeout: timeout)
    }

    /// Stops it (SIGTERM) and returns its last report. It ends at its next round; should a
    /// round be blocked (a flush against a busy or stalled dbus-daemon, during which its
    /// SIGTERM handler cannot run), it is killed after 20 s and the report it printed last
    /// (on each new destination and every 100 rounds) is what it did.
    /// - Throws: ``HarnessError/badJSON(_:)`` when it printed no report at all.
    public func stop() throws -> Report {
        process.sendSignal(SIGTERM)
        let result = process.wait(timeout: .seconds(20))
        guard let line = result.stdout.split(separator: "\n").last(where: { $0.hasPrefix("{") }) else {
            throw HarnessError.badJSON("impostor exited \(result.status) without a report: \(result.stdout) \(result.stderr)")
        }
        do { return try JSONDecoder().decode(Report.self, from: Data(line.utf8)) }
        catch { throw HarnessError.badJSON("\(error): \(line)") }
    }
}

extension Simulator {
    /// Starts `sim/impostor` on this simulator's bus and waits (30 s at most) until it is
    /// connected; it sends its first round at once.
    /// - Parameters:
    ///   - claims: which claims it sends (sim/impostor --claims: disconnected, battery1,
    ///     vendor, level, removed); nil: all.
    ///   - intervalMilliseconds: the pause between rounds (default 5 ms).
    public func startImpostor(claims: [String]? = nil, intervalMilliseconds: Double = 5) throws -> Impostor {
        let exe = repoRoot.appendingPathComponent("sim/impostor").path
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        var args = ["--address", address, "--interval-ms", String(intervalMilliseconds)]
        if let claims { args += ["--claims", claims.joined(separator: ",")] }
        let proc = try spawnChild(exe, args, environment: environment, stdinPipe: true)
        let found = proc.waitForStdout(containing: "\n", timeout: .seconds(30))
        let text = proc.currentStdout
        guard found, let line = text.split(separator: "\n").first, line.hasPrefix("IMPOSTOR=") else {
            proc.sendSignal(SIGKILL)
            let r = proc.wait(timeout: .seconds(2))
            throw HarnessError.simulatorDidNotStart("sim/impostor did not connect: \(text) \(r.stderr)")
        }
        return Impostor(uniqueName: String(line.dropFirst("IMPOSTOR=".count)), process: proc)
    }
}
