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
//
// StartNotify is refused on such a link (NotConnected "Not Connected"; bluetoothd logs "Device is disconnecting"): `request`
// and `notify` right after a failed command failed 4 at notification_setup on the real
// bluetoothd (realbluez, test_request_after_failure). They now wait for the link to go down,
// connect anew and subscribe on their own link, which they then disconnect.

import Foundation
import SimulatorHarness
import Testing

@Suite struct BackToBackTests {
    @Test("a command right after a failed one on the same device works on the link BlueZ is still disconnecting", arguments: [
        ["read", World.probe, "2a19"],
        ["get-battery", World.probe],
        ["connect", World.probe],
    ])
    func afterAFailure(_ second: [String]) async throws {
        // BlueZ's disconnect timer, held by the simulator (disconnect_held) until the second
        // command is done: with the 2 s timer a loaded machine could start it too late.
        try await Sim.with(faults: ["disconnect_held": "1"], fastDisconnect: false) { sim in
            let first = await sim.blectl(["read", World.probe, "2a99"])
            #expect(first.status == 3, "\(first)")
            // The first blectl has ended; its Disconnect is still running in BlueZ.
            try #require(await sim.state().connections.first?.disconnecting == true, "the link was already down: nothing to test")
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
            try await sim.setFault("disconnect_held", "0")
            try #expect(await sim.waitForState(timeout: .seconds(30)) { $0.connections.isEmpty })
            try await sim.scenarioExpectClean()
        }
    }

    /// Runs `arguments` while the first command's Disconnect is held (disconnect_held), and
    /// lets BlueZ finish that disconnection once the call log shows `reached`: the second
    /// command has then seen the link still up, however slowly it started.
    static func runWhileDisconnecting(_ sim: Sim, _ arguments: [String],
                                      until reached: @escaping @Sendable (SimCall) -> Bool) async throws -> Run {
        let process = try await sim.launch(arguments)
        let seen = try await sim.scenarioWaitForCall(reached)
        try await sim.setFault("disconnect_held", "0")
        let result = try await process.finish(timeout: .seconds(60))
        #expect(seen, "the second command never got there: \(result)")
        return Run(arguments: arguments, result: result)
    }

    @Test("a link found up that goes down before its services are resolved is connected anew", arguments: [
        ["read", World.probe, "2a19"],
        ["get-battery", World.probe],
        ["connect", World.probe],
    ])
    func afterAResolutionTimeout(_ second: [String]) async throws {
        try await Sim.with(faults: ["services_resolved_never": "1", "disconnect_held": "1"], fastDisconnect: false) { sim in
            let first = await sim.blectl(["connect", World.probe, "--timeout", "5"])
            #expect(first.status == 124, "\(first)")
            let state = try await sim.state()
            try #require(state.connections.first?.disconnecting == true, "the link was already down: nothing to test")
            try await sim.setFault("services_resolved_never", "0")
            // The second command's GetManagedObjects answered: it found the link up.
            let firstCaller = try await sim.calls().first?.sender
            let run = try await Self.runWhileDisconnecting(sim, second) {
                $0.member == "GetManagedObjects" && $0.sender != firstCaller && $0.outcome == "reply"
            }
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

    @Test("request right after a failed command: StartNotify refused on the link BlueZ is disconnecting, connected anew, the exact answer")
    func requestAfterAFailure() async throws {
        try await Sim.with(faults: ["disconnect_held": "1"], fastDisconnect: false) { sim in
            let first = await sim.blectl(["read", World.vendor, "2a99"])
            #expect(first.status == 3, "\(first)")
            try #require(await sim.state().connections.first?.disconnecting == true, "the link was already down: nothing to test")
            // --response-prefix 81: the vendor device also notifies its status (90 00) every
            // 300 ms, which may come first on a loaded machine; the answer is the one to check.
            let run = try await Self.runWhileDisconnecting(sim, ["request", World.vendor, "--write", World.vendorWrite,
                                                                 "--notify", World.vendorNotify, "01", "--response-prefix", "81"]) {
                $0.member == "StartNotify" && $0.outcome == "error:org.bluez.Error.NotConnected"
            }
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == ["address": .string(World.vendor), "request": "01", "responses": [["value": "81020007", "text": .null]]])
            let calls = try await sim.calls()
            // The refused StartNotify on the old link, then one on the new link, stopped at the end.
            #expect(calls.filter { $0.member == "StartNotify" }.map(\.outcome) == ["error:org.bluez.Error.NotConnected", "reply"])
            #expect(calls.filter { $0.member == "WriteValue" }.count == 1, "the request is written once, on the new link")
            #expect(calls.filter { $0.member == "Connect" }.count == 2, "the second command connects anew")
            #expect(calls.filter { $0.member == "Disconnect" }.count == 2, "each command disconnects the link it made")
            try #expect(await sim.waitForState(timeout: .seconds(30)) { $0.connections.isEmpty })
            try await sim.scenarioExpectClean()
        }
    }

    @Test("notify --count right after a failed command: subscribed on a new link, exactly the values sent, nothing left")
    func notifyAfterAFailure() async throws {
        try await Sim.with(faults: ["notify_burst": "5", "notify_burst_char": "2a19", "disconnect_held": "1"], fastDisconnect: false) { sim in
            let first = await sim.blectl(["read", World.gattBattery, "2a99"])
            #expect(first.status == 3, "\(first)")
            try #require(await sim.state().connections.first?.disconnecting == true, "the link was already down: nothing to test")
            let started = Date()
            let run = try await Self.runWhileDisconnecting(sim, ["notify", World.gattBattery, "2a19", "--count", "5", "--timeout", "30"]) {
                $0.member == "StartNotify" && $0.outcome == "error:org.bluez.Error.NotConnected"
            }
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            NotifyTests.expectRecords(run, values: (1...5).map(NotifyTests.hex), connections: [1, 1, 1, 1, 1], from: started, to: Date())
            let calls = try await sim.calls()
            // AcquireNotify is granted on a link being disconnected; the StartNotify that follows
            // on a link found up is refused NotConnected there: the socket is dropped, and
            // AcquireNotify asked again on the new link (closed at the end, nothing to stop).
            #expect(calls.notifyCalls == ["AcquireNotify reply", "StartNotify error:org.bluez.Error.NotConnected", "AcquireNotify reply"])
            #expect(calls.filter { $0.member == "Connect" }.count == 2, "the second command connects anew")
            #expect(calls.filter { $0.member == "Disconnect" }.count == 2, "each command disconnects the link it made")
            try #expect(await sim.waitForState(timeout: .seconds(30)) { $0.connections.isEmpty })
            try await sim.scenarioExpectClean()
        }
    }

    @Test("notify right after a failed command, the link still going down at --timeout: 124 waiting for the link to go down, the wait named")
    func notifyTimesOutWaitingForTheDisconnect() async throws {
        // Held for good: the old link never goes down within the second command's --timeout.
        try await Sim.with(faults: ["disconnect_held": "1"], fastDisconnect: false) { sim in
            let first = await sim.blectl(["read", World.gattBattery, "2a99"])
            #expect(first.status == 3, "\(first)")
            try #require(await sim.state().connections.first?.disconnecting == true, "the link was already down: nothing to test")
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--timeout", "1"])
            #expect(run.status == 124, "\(run)")
            // The stage is the wait for BlueZ's disconnection, not a Connect nobody sent.
            let error = run.jsonError()
            #expect(run.stdout == "")
            #expect(error?["operation"] == "disconnect", "\(run.stderr)")
            #expect(error?["message"] == .string("timed out waiting for the link to go down on \(World.gattBattery)"), "\(run.stderr)")
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.count == 1, "only the first command connected")
            try await sim.setFault("disconnect_held", "0")
            try #expect(await sim.waitForState(timeout: .seconds(30)) { $0.connections.isEmpty })
            try await sim.scenarioExpectClean()
        }
    }
}
