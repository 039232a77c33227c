// A command right after one that failed on the same device: the first left its Disconnect
// with BlueZ (which keeps Connected true for its disconnect timer), so the second finds the
// link up. Found by a new user: `blectl read ADDR 2a99; blectl read ADDR 2a19` failed 3
// times in 3 ("disconnected during service resolution", exit 4) against the simulator,
// which cleared ServicesResolved as soon as Disconnect was asked.
//
// bluetoothd 5.66 keeps ServicesResolved true and answers reads and writes until the link
// is down (realbluez, make test-real; sim/README.md "The disconnect timer"): the second
// command works on that link, which it did not make (one Connect in all; `connect` says
// was_connected). A link found up that goes down before its services are resolved (the
// command before gave up during service resolution) is connected anew.

import SimulatorHarness
import Testing

@Suite struct BackToBackTests {
    @Test("a command right after a failed one on the same device works on the link BlueZ is still disconnecting", arguments: [
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
            if second.first == "connect" {
                #expect(run.jsonObject()?["was_connected"] == true, "\(run.stdout)")
            }
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.count == 1, "the second command used the link that was up")
            #expect(calls.filter { $0.member == "Disconnect" }.count == 1, "the link is BlueZ's to close, not the second command's")
            try #expect(await sim.waitForState(timeout: .seconds(6)) { $0.connections.isEmpty })
            try await sim.scenarioExpectClean()
        }
    }

    @Test("a link found up that goes down before its services are resolved is connected anew", arguments: [
        ["read", World.probe, "2a19"],
        ["get-battery", World.probe],
        ["connect", World.probe],
    ])
    func afterAResolutionTimeout(_ second: [String]) async throws {
        try await Sim.with(faults: ["services_resolved_never": "1"], fastDisconnect: false) { sim in
            let first = await sim.blectl(["connect", World.probe, "--timeout", "1.5"])
            #expect(first.status == 124, "\(first)")
            let state = try await sim.state()
            try #require(state.connections.first?.disconnecting == true, "the link was already down: nothing to test")
            try await sim.setFault("services_resolved_never", "0")
            let run = await sim.blectl(second)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.stdout.contains("\"address\":\"\(World.probe)\""), "\(run.stdout)")
            if second.first == "connect" {
                #expect(run.jsonObject()?["was_connected"] == false, "\(run.stdout)")
            }
            let connects = try await sim.calls().filter { $0.member == "Connect" }.count
            #expect(connects == 2, "the second command should have connected anew")
            try await sim.scenarioExpectClean()
        }
    }
}
