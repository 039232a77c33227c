// stdout closed by the reader (`blectl … | head -1`): blectl must not die on the spot by
// SIGPIPE with a connection of its own still up in BlueZ. It stops its work, cleans up
// like for SIGINT, and then ends by SIGPIPE (141), as the shell expects of a pipeline.

import SimulatorHarness
import Testing

@Suite("stdout closed by the reader")
struct ClosedPipeTests {
    /// Runs `blectl arguments | reader` under bash and returns blectl's status
    /// (PIPESTATUS[0]: 128+signal when it died by one) and the reader's output.
    static func pipeline(_ sim: Sim, _ arguments: [String], into reader: String) async -> Run {
        let script = "\"$0\" \"$@\" | \(reader); exit \"${PIPESTATUS[0]}\""
        let simulator = sim.simulator
        let r = (try? await offThread {
            simulator.run("/bin/bash", ["-c", script, BlectlBinary.path] + arguments, timeout: .seconds(20))
        }) ?? (status: -1, stdout: "", stderr: "")
        return Run(arguments: arguments, status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    @Test("connect | true: the connection blectl made is disconnected, then 141")
    func connect() async throws {
        try await Sim.with { sim in
            // `true` is long gone when blectl prints the tree (after connecting).
            let run = await Self.pipeline(sim, ["connect", World.probe, "--format", "text"], into: "true")
            #expect(run.status == 141, "\(run)")
            #expect(run.stderr == "", "\(run)")
            try await sim.expectClean()
            try #expect(await sim.calls().contains { $0.member == "Disconnect" }, "blectl never disconnected")
        }
    }

    @Test("scan --updates | head -n 1: the scan stops at the next line, discovery stopped, 141")
    func scanUpdates() async throws {
        try await Sim.with { sim in
            let run = await Self.pipeline(sim, ["scan", "--timeout", "15", "--updates", "--rssi-min", "-127"], into: "head -n 1")
            #expect(run.status == 141, "\(run)")
            #expect(run.stderr == "", "\(run)")
            #expect(run.lines.count == 1)
            #expect(J.parse(run.lines.first ?? "")?["adapter"] == "hci0", "\(run)")
            let members = try await sim.calls().map(\.member)
            #expect(members.contains("StopDiscovery"), "discovery not stopped by blectl: \(members)")
            try await sim.expectClean()
        }
    }

    /// The reader leaves after every line was written and no further line comes (no
    /// --updates, every device already reported): blectl notices the closed pipe all the
    /// same, instead of scanning on into the void for the rest of its 15 s (then exit 0).
    @Test("scan | a reader that leaves after the last line: discovery stopped, 141")
    func scanQuiet() async throws {
        try await Sim.with { sim in
            let run = await Self.pipeline(sim, ["scan", "--timeout", "15"], into: "sleep 1")
            #expect(run.status == 141, "\(run)")
            #expect(run.stderr == "", "\(run)")
            let members = try await sim.calls().map(\.member)
            #expect(members.contains("StopDiscovery"), "discovery not stopped by blectl: \(members)")
            try await sim.expectClean()
        }
    }

    @Test("stdout a file or /dev/null: the scan runs to its end, status 0", arguments: ["/dev/null", "file"])
    func notAPipe(_ target: String) async throws {
        try await Sim.with { sim in
            let script = target == "file"
                ? "f=$(mktemp); \"$0\" \"$@\" >\"$f\"; s=$?; cat \"$f\"; rm -f \"$f\"; exit $s"
                : "\"$0\" \"$@\" >/dev/null"
            let simulator = sim.simulator
            let r = try await offThread {
                simulator.run("/bin/bash", ["-c", script, BlectlBinary.path, "scan", "--count", "10", "--timeout", "60"], timeout: .seconds(90))
            }
            let run = Run(arguments: ["scan"], status: r.status, stdout: r.stdout, stderr: r.stderr)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            if target == "file" {
                #expect(Set(run.jsonLines().compactMap { $0["address"]?.string }) == Set(World.known + World.fillers))
            }
            let members = try await sim.calls().map(\.member)
            #expect(members.suffix(1) == ["StopDiscovery"], "\(members)")
        }
    }
}
