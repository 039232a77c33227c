// Support for the tests that prove the core's faults (batched signals, impostors, a lost
// bus, a bluetoothd that blinks): the harness's bus and impostor helpers off the
// cooperative pool, and a finished process read as a Run.

import Foundation
import SimulatorHarness
import Testing

extension Sim {
    /// The private dbus-daemon's pid (fetch it before the moment ``killBus(_:)`` must hit).
    func busProcessID() async throws -> Int32 {
        let simulator = simulator
        return try await offThread { try simulator.busProcessID() }
    }

    /// SIGKILLs the private dbus-daemon now; the simulator ends with it.
    func killBus(_ busPID: Int32) async throws {
        let simulator = simulator
        try await offThread { try simulator.killBus(busPID: busPID) }
    }

    /// Starts sim/impostor on this bus (`claims`: some of its claims; nil: all).
    func startImpostor(claims: [String]? = nil) async throws -> Impostor {
        let simulator = simulator
        return try await offThread { try simulator.startImpostor(claims: claims) }
    }

    /// The unique names that called org.bluez (blectl's, in a test that runs only blectl).
    func callers() async throws -> Set<String> {
        try await Set(calls().map(\.sender))
    }
}

extension Impostor {
    /// ``stop()`` off the cooperative pool.
    func finish() async throws -> Report {
        try await offThread { try self.stop() }
    }
}

extension Run {
    /// A process started with ``Sim/launch(_:)`` and waited for.
    init(arguments: [String], result: ProcessResult) {
        self.init(arguments: arguments, status: result.status, stdout: result.stdout, stderr: result.stderr)
    }
}

/// The value of each RSSI line of `address` in a scan's output, in order.
func scanRSSIs(_ run: Run, of address: String, sourceLocation: SourceLocation = #_sourceLocation) -> [Int] {
    run.jsonLines(sourceLocation: sourceLocation).filter { $0["address"]?.string == address }.compactMap { $0["rssi"]?.int }
}
