import Testing
import Foundation
import SimulatorHarness

/// The first thing a user runs: version and help, and one probe against the simulator.
@Suite struct LeadSmokeTests {
    private static var binary: String {
        if let path = ProcessInfo.processInfo.environment["BLECTL_BIN"] { return path }
        // Tests/EndToEndTests/<file> -> repository root -> .build/debug/blectl
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/blectl").path
    }

    @Test func versionAndHelpGoToStdoutWithStatusZero() throws {
        let sim = try Simulator.start()
        let version = sim.run(Self.binary, ["--version"], environment: [:], timeout: .seconds(10))
        #expect(version.status == 0)
        #expect(version.stdout == "blectl 0.1.0\n")
        #expect(version.stderr.isEmpty)
        let help = sim.run(Self.binary, ["--help"], environment: [:], timeout: .seconds(10))
        #expect(help.status == 0)
        for subcommand in ["scan", "connect", "get-version", "get-battery", "read", "write", "request", "disconnect"] { #expect(help.stdout.contains(subcommand)) }
    }

    @Test func getBatteryAnswersFromTheSimulatedProbe() throws {
        let sim = try Simulator.start(faults: ["disconnect_delay_ms": "100"])
        let result = sim.run(Self.binary, ["get-battery", "C0:FF:EE:00:00:01"], environment: [:], timeout: .seconds(20))
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        #expect(object?["address"] as? String == "C0:FF:EE:00:00:01")
        #expect(object?["percentage"] as? Int == 87)
        #expect(["gatt", "battery1"].contains(object?["source"] as? String ?? ""))
        #expect(try sim.state().connections.isEmpty || (try sim.state().connections.allSatisfy(\.disconnecting)))
    }

    /// `blectl scan | head -1`: when the reader goes, blectl stops discovery and ends by
    /// SIGPIPE at once, not at the end of its 30 s scan.
    @Test func scanEndsWhenItsReaderGoes() throws {
        let sim = try Simulator.start()
        let started = ContinuousClock.now
        let result = sim.run("/bin/sh", ["-c", "'\(Self.binary)' scan --timeout 30 | head -n 1; echo \"status=${?}\" >&2"],
                             environment: [:], timeout: .seconds(15))
        #expect(ContinuousClock.now - started < .seconds(10))
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["address"] is String)
        // Discovery was stopped (poll: StopDiscovery may still be on its way).
        var sessions = try sim.state().discoverySessions.count
        for _ in 0..<30 where sessions != 0 { Thread.sleep(forTimeInterval: 0.1); sessions = try sim.state().discoverySessions.count }
        #expect(sessions == 0)
    }
}
