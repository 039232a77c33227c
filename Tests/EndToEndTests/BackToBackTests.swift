// A command right after one that failed on the same device: the first left its Disconnect
// with BlueZ (which keeps Connected true for its 2 s disconnect timer), so the second finds
// the link up and then sees it go down before it has done anything on it. It connects anew
// instead of failing "disconnected during service resolution" (exit 4). Found by a new user:
// `blectl read ADDR 2a99; blectl read ADDR 2a19` failed 3 times in 3.

import SimulatorHarness
import Testing

@Suite struct BackToBackTests {
    @Test("a command right after a failed one on the same device connects anew", arguments: [
        ["read", World.probe, "2a19"],
        ["get-battery", World.probe],
        ["connect", World.probe],
    ])
    func afterAFailure(_ second: [String]) async throws {
        // BlueZ's 2 s disconnect timer (no fast disconnect).
        try await Sim.with(fastDisconnect: false) { sim in
            let first = await sim.blectl(["read", World.probe, "2a99"])
            #expect(first.status == 3, "\(first)")
            // The first blectl has ended; its Disconnect is still running in BlueZ.
            try #expect(await sim.state().connections.first?.disconnecting == true, "the link was already down: nothing to test")
            let run = await sim.blectl(second)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.stdout.contains("\"address\":\"\(World.probe)\""), "\(run.stdout)")
            let connects = try await sim.calls().filter { $0.member == "Connect" }.count
            #expect(connects == 2, "the second command should have connected anew")
            try await sim.scenarioExpectClean()
        }
    }
}
