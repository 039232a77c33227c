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

    // The harness blocks (waiting for a process): off the cooperative pool, which every
    // test of the process shares.

    @Test func versionAndHelpGoToStdoutWithStatusZero() async throws {
        try await Simulator.with { sim in
            let version = try await offThread { sim.run(Self.binary, ["--version"], environment: [:], timeout: .seconds(10)) }
            #expect(version.status == 0)
            #expect(version.stdout == "blectl 0.1.0\n")
            #expect(version.stderr.isEmpty)
            let help = try await offThread { sim.run(Self.binary, ["--help"], environment: [:], timeout: .seconds(10)) }
            #expect(help.status == 0)
            for subcommand in ["scan", "connect", "get-version", "get-battery", "read", "write", "request", "disconnect", "info", "devices", "adapters"] { #expect(help.stdout.contains(subcommand)) }
        }
    }

    @Test func getBatteryAnswersFromTheSimulatedProbe() async throws {
        try await Simulator.with(faults: ["disconnect_delay_ms": "100"]) { sim in
            let result = try await offThread {
                sim.run(Self.binary, ["get-battery", "C0:FF:EE:00:00:01"], environment: [:], timeout: .seconds(20))
            }
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect(object?["address"] as? String == "C0:FF:EE:00:00:01")
            #expect(object?["percentage"] as? Int == 87)
            // Battery1 comes with ServicesResolved (sim/README.md, Timing): the first source.
            #expect(object?["source"] as? String == "battery1")
            // blectl sent Disconnect and left without waiting for BlueZ's reply (man page,
            // get-battery): BlueZ takes the link down on its own, after its disconnect timer.
            let down = try await offThread { try sim.waitForState(timeout: .seconds(60)) { $0.connections.isEmpty } }
            let left = try await offThread { try sim.state() }.connections.map(\.address)
            #expect(down && left == [], "a link left up: \(left)")
        }
    }

    /// `blectl scan | head -1`: when the reader goes, blectl stops discovery and ends by
    /// SIGPIPE (141), not at the end of its 30 s scan (0; the harness would kill it first).
    @Test func scanEndsWhenItsReaderGoes() async throws {
        try await Simulator.with { sim in
            let script = "\"$0\" scan --timeout 30 | head -n 1; exit \"${PIPESTATUS[0]}\""
            let result = try await offThread { sim.run("/bin/bash", ["-c", script, Self.binary], environment: [:], timeout: .seconds(20)) }
            #expect(result.status == 141, "stderr: \(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            #expect(lines.count == 1)
            let first = try JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8)) as? [String: Any]
            #expect(first?["address"] is String)
            // Discovery was stopped by blectl, not only by its leaving the bus.
            try #expect(await offThread { try sim.calls() }.filter { $0.member == "StopDiscovery" }.count == 1)
            try #expect(await offThread { try sim.waitForState(timeout: .seconds(10)) { $0.discoverySessions.isEmpty } })
        }
    }
}
