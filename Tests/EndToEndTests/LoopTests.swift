// Commands in a loop (issue 12, target 2): a one-shot command sends its Disconnect and ends
// without waiting for BlueZ's 2 s disconnect timer, so the next command on the same device
// finds the link still up (BlueZ disconnecting). It reads over that link and leaves it to
// BlueZ (no Connect, no Disconnect of its own); a link that goes down under its read is
// connected anew (Device.withConnection's relink), and that link it closes. Checked by the
// simulator's calls and state, never by the clock.

import SimulatorHarness
import Testing

@Suite struct LoopTests {
    static let percentages = [World.probe: 87, World.battery1: 42, World.gattBattery: 55, World.toolbox: 33, World.vendor: 64]

    static func expectBattery(_ run: Run, _ address: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 0, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderr == "", "\(run)", sourceLocation: sourceLocation)
        #expect(run.jsonObject()?["percentage"] == .int(percentages[address] ?? -1), "\(run)", sourceLocation: sourceLocation)
    }

    @Test("five back-to-back get-battery while BlueZ disconnects the first link: the 2nd..5th read over it, one Connect, one Disconnect, nothing left")
    func fiveOnOneDeviceOverTheDisconnectingLink() async throws {
        // The first command's disconnection held midway: the four that follow find the link up.
        try await Sim.with(faults: ["disconnect_held": "1"], fastDisconnect: false) { sim in
            for _ in 0..<5 { Self.expectBattery(await sim.blectl(["get-battery", World.probe]), World.probe) }
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.count == 1, "the 2nd..5th connected: \(calls.map(\.member))")
            #expect(calls.filter { $0.member == "Disconnect" }.map(\.outcome) == ["pending"], "the 2nd..5th disconnected a link they found")
            try await sim.setFault("disconnect_held", "0")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("five back-to-back get-battery with BlueZ's 2 s timer: all correct; a command closes only a link it made; nothing left after the timer")
    func fiveOnOneDeviceWithTheTimer() async throws {
        try await Sim.with(fastDisconnect: false) { sim in
            for _ in 0..<5 { Self.expectBattery(await sim.blectl(["get-battery", World.probe]), World.probe) }
            let calls = try await sim.calls()
            let connects = calls.filter { $0.member == "Connect" }.count
            // How many found the link up depends on the machine's speed (the timer runs 2 s
            // from each Disconnect); which link each closes does not.
            #expect((1...5).contains(connects))
            #expect(calls.filter { $0.member == "Disconnect" }.count == connects, "\(calls.map(\.member))")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("the link goes down under a read on a link found up (BlueZ's timer fires): connected anew, read there, that link closed")
    func relinkWhenTheTimerFiresMidRead() async throws {
        try await Sim.with(faults: ["disconnect_held": "1"], fastDisconnect: false) { sim in
            Self.expectBattery(await sim.blectl(["get-battery", World.gattBattery]), World.gattBattery)
            // The next read stays unanswered on the link found up; then BlueZ's timer fires
            // under it (the held disconnection released), which fails the read.
            try await sim.setFault("read_never_answers", "1")
            let process = try await sim.launch(["get-battery", World.gattBattery])
            try #expect(await sim.waitForState(timeout: .seconds(20)) { !$0.pendingGATT.isEmpty }, "no read")
            try await sim.setFault("read_never_answers", "0")
            try await sim.setFault("disconnect_held", "0")
            let result = try await process.finish(timeout: .seconds(30))
            #expect(result.status == 0, "\(result)")
            #expect(J.parse(result.stdout)?["percentage"] == 55, "\(result)")
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "ReadValue" }.count == 3, "read, read cut by the link loss, read on the new link: \(calls.map(\.member))")
            #expect(calls.filter { $0.member == "Connect" }.count == 2, "\(calls.map(\.member))")
            #expect(calls.filter { $0.member == "Disconnect" }.count == 2, "the relinked command closes its own link")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("one get-battery on each of five devices: each connects, reads and closes its own link; nothing left after the timers")
    func oneEachOnFiveDevices() async throws {
        try await Sim.with(faults: World.toolboxFaults, fastDisconnect: false) { sim in
            for address in [World.probe, World.battery1, World.gattBattery, World.toolbox] {
                Self.expectBattery(await sim.blectl(["get-battery", address]), address)
            }
            Self.expectBattery(await sim.blectl(["get-battery", World.vendor] + World.vendorOptions), World.vendor)
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.count == 5)
            #expect(calls.filter { $0.member == "Disconnect" }.count == 5)
            try await sim.scenarioExpectClean()
        }
    }

    @Test("request right after a get-battery: StartNotify refused on the disconnecting link, waits for it to go down, connects anew")
    func requestAfterASuccess() async throws {
        try await Sim.with(faults: ["disconnect_held": "1"], fastDisconnect: false) { sim in
            Self.expectBattery(await sim.blectl(["get-battery", World.vendor] + World.vendorOptions), World.vendor)
            let process = try await sim.launch(["request", World.vendor, "--write", World.vendorWrite, "--notify", World.vendorNotify, "01",
                                                "--response-prefix", "81"])
            // Refused while the first link is still going down; the command waits for it.
            // Polled up to 30 s (a hang guard: the instrumented blectl may take seconds to get there).
            let refused = try await sim.scenarioWaitForCall { $0.member == "StartNotify" && $0.outcome == "error:org.bluez.Error.NotConnected" }
            #expect(refused, "StartNotify was not refused on the disconnecting link")
            try await sim.setFault("disconnect_held", "0")
            let result = try await process.finish(timeout: .seconds(30))
            #expect(result.status == 0, "\(result)")
            #expect(J.parse(result.stdout) == ["address": .string(World.vendor), "request": "01", "responses": [["value": "81020007", "text": .null]]])
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.count == 2)
            #expect(calls.filter { $0.member == "Disconnect" }.count == 2)
            try await sim.scenarioExpectClean()
        }
    }

    @Test("pair right after a failed read: the link found up goes down under the bonding; Pair again on a link of its own")
    func pairAfterAFailedRead() async throws {
        let faults = World.secureFaults.merging(["disconnect_held": "1", "pair_never_completes": "1"]) { $1 }
        try await Sim.with(faults: faults, fastDisconnect: false) { sim in
            let refused = await sim.blectl(["read", World.secure, "5ec00002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"])
            #expect(refused.status == 77, "\(refused)")
            let process = try await sim.launch(["pair", World.secure, "--passkey", "123456"])
            // The bonding runs over the link BlueZ is disconnecting; then its timer fires.
            try #expect(await sim.waitForState(timeout: .seconds(20)) { $0.pairings?.first?.stage == "exchange" }, "no bonding")
            try await sim.setFault("pair_never_completes", "0")
            try await sim.setFault("disconnect_held", "0")
            let result = try await process.finish(timeout: .seconds(30))
            #expect(result.status == 0, "\(result)")
            #expect(J.parse(result.stdout)?["paired"] == true, "\(result)")
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Pair" }.map(\.outcome) == ["error:org.bluez.Error.AuthenticationCanceled", "reply"])
            #expect(calls.filter { $0.member == "Disconnect" }.count == 2, "the read's link, then the one the second Pair opened")
            try await sim.scenarioExpectClean()
        }
    }
}
