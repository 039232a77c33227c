// blectl pair and unpair against the simulator's agent-driven pairing (sim/README.md,
// Pairing): Just Works and passkey entry through blectl's own agent, the agent gone and the
// link Pair opened closed afterwards, a device paired already left alone, RemoveDevice.

import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension World {
    /// "blesim Secure": advertises with fault secure_device; DisplayOnly, passkey 123456.
    static let secure = "C0:FF:EE:00:00:07"
    static let securePath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_07"
    /// The faults that bring blesim Secure into the world.
    static let secureFaults = ["secure_device": "1"]
    /// The pair record's keys, in order.
    static let pairKeys = ["address", "paired", "bonded", "trusted"]
}

@Suite("pair and unpair")
struct PairTests {
    /// The Device1 and AgentManager1 members the simulator received, in order.
    static func pairingCalls(_ sim: Sim) async throws -> [String] {
        try await sim.calls().filter { ["org.bluez.Device1", "org.bluez.AgentManager1", "org.bluez.Adapter1"].contains($0.interface ?? "") }
            .map(\.member).filter { !["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"].contains($0) }
    }

    @Test("Just Works: paired and bonded, no agent question, the agent unregistered, the link Pair opened closed")
    func justWorks() async throws {
        try await Sim.with(faults: World.secureFaults) { sim in
            let run = await sim.blectl(["pair", World.secure])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == ["address": "C0:FF:EE:00:00:07", "paired": true, "bonded": true, "trusted": false])
            #expect(topLevelKeys(run.stdout) == World.pairKeys)
            let state = try await sim.state()
            #expect(state.paired == [World.secure])
            #expect(state.agentCalls == [], "a NoInputNoOutput agent is asked nothing")
            try await sim.expectClean()
            try #expect(await Self.pairingCalls(sim) == ["RegisterAgent", "Pair", "UnregisterAgent", "Disconnect"])
        }
    }

    @Test("--passkey: bluetoothd asks the agent, which types it; the device is paired")
    func rightPasskey() async throws {
        try await Sim.with(faults: World.secureFaults) { sim in
            let run = await sim.blectl(["pair", World.secure, "--passkey", "123456"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == ["address": "C0:FF:EE:00:00:07", "paired": true, "bonded": true, "trusted": false])
            let state = try await sim.state()
            let asked = try #require(state.agentCalls)
            #expect(asked.map(\.member) == ["RequestPasskey"])
            #expect(asked.first?.device == World.securePath)
            #expect(asked.first?.outcome == "reply:123456")
            #expect(state.paired == [World.secure])
            try await sim.expectClean()
        }
    }

    @Test("--passkey with leading zeros: 000042 is the passkey 42")
    func shortPasskey() async throws {
        try await Sim.with(faults: World.secureFaults.merging(["pair_passkey": "42"]) { $1 }) { sim in
            let run = await sim.blectl(["pair", World.secure, "--passkey", "000042"])
            #expect(run.status == 0, "\(run)")
            try #expect(await sim.state().agentCalls?.map(\.outcome) == ["reply:42"])
        }
    }

    @Test("a wrong passkey: 77 authentication_failed naming the pair operation; not paired, nothing left")
    func wrongPasskey() async throws {
        try await Sim.with(faults: World.secureFaults) { sim in
            let run = await sim.blectl(["pair", World.secure, "--passkey", "654321"])
            #expect(run.status == 77, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error.removing("message") == [
                "code": "authentication_failed", "exit_status": 77, "retryable": false, "operation": "pair", "address": "C0:FF:EE:00:00:07",
                "service": .null, "characteristic": .null, "dbus_error": "org.bluez.Error.AuthenticationFailed",
            ])
            #expect(error["message"]?.string?.contains("Authentication Failed") == true, "\(error)")
            let state = try await sim.state()
            #expect(state.paired == [])
            #expect(state.agentCalls?.map(\.outcome) == ["reply:654321"])
            try await sim.expectClean()
            try #expect(await Self.pairingCalls(sim) == ["RegisterAgent", "Pair", "UnregisterAgent", "Disconnect"])
        }
    }

    @Test("--trust: Trusted set after pairing")
    func trust() async throws {
        try await Sim.with(faults: World.secureFaults) { sim in
            let run = await sim.blectl(["pair", World.secure, "--trust", "--passkey", "123456"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == ["address": "C0:FF:EE:00:00:07", "paired": true, "bonded": true, "trusted": true])
            try await sim.expectClean()
        }
    }

    @Test("paired already: exit 0 with the state, no agent, no Pair, no connection; --trust still applied")
    func alreadyPaired() async throws {
        try await Sim.with(faults: World.secureFaults) { sim in
            let first = await sim.blectl(["pair", World.secure])
            #expect(first.status == 0, "\(first)")
            let callsBefore = try await sim.calls().count
            let again = await sim.blectl(["pair", World.secure, "--passkey", "111111"])
            #expect(again.status == 0, "\(again)")
            #expect(again.jsonObject() == ["address": "C0:FF:EE:00:00:07", "paired": true, "bonded": true, "trusted": false])
            let trusted = await sim.blectl(["pair", World.secure, "--trust"])
            #expect(trusted.status == 0, "\(trusted)")
            #expect(trusted.jsonObject() == ["address": "C0:FF:EE:00:00:07", "paired": true, "bonded": true, "trusted": true])
            let later = try await sim.calls().dropFirst(callsBefore).map(\.member)
            #expect(!later.contains("Pair") && !later.contains("RegisterAgent") && !later.contains("Connect"), "\(later)")
            #expect(later.contains("Set"), "\(later)")
            try #expect(await sim.state().agentCalls == [])
            try await sim.expectClean()
        }
    }

    @Test("the hint followed: a read refused with not_permitted (77, 'try blectl pair') reads once paired; unpaired, refused again")
    func readNeedsPairing() async throws {
        try await Sim.with(faults: World.secureFaults.merging(World.toolboxFaults) { $1 }) { sim in
            let secret = "5ec00002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
            let refused = await sim.blectl(["read", World.secure, secret])
            #expect(refused.status == 77, "\(refused)")
            let error = try #require(refused.jsonError())
            #expect(error["code"] == "not_permitted")
            #expect(error["dbus_error"] == "org.bluez.Error.NotPermitted")
            #expect(error["message"]?.string?.hasSuffix("(the device wants pairing or encryption: try 'blectl pair C0:FF:EE:00:00:07')") == true,
                    "\(error)")
            #expect(await sim.blectl(["pair", World.secure, "--passkey", "123456"]).status == 0)
            let read = await sim.blectl(["read", World.secure, secret])
            #expect(read.status == 0, "\(read)")
            #expect(read.jsonObject()?["text"] == "blesim secret")
            // The toolbox device's characteristic that wants pairing: Just Works unlocks it too.
            #expect(await sim.blectl(["read", "C0:FF:EE:00:00:06", World.toolboxSecure]).status == 77)
            #expect(await sim.blectl(["pair", "C0:FF:EE:00:00:06"]).status == 0)
            let toolbox = await sim.blectl(["read", "C0:FF:EE:00:00:06", World.toolboxSecure])
            #expect(toolbox.status == 0, "\(toolbox)")
            #expect(toolbox.jsonObject()?["value"] == "01")
            #expect(await sim.blectl(["unpair", World.secure]).status == 0)
            #expect(await sim.blectl(["read", World.secure, secret]).status == 77, "the pairing went with the device")
            // What was left, named (a stress run once found something left here, unnamed).
            let left = try await sim.leftovers()
            let calls = try await sim.calls().map { "\($0.member) \($0.outcome)" }
            #expect(left == [], "left behind: \(left); calls: \(calls)")
        }
    }

    @Test("a link that was up before is left up")
    func connectedBefore() async throws {
        try await Sim.with(faults: World.secureFaults.merging(["preconnected": World.secure]) { $1 }) { sim in
            let run = await sim.blectl(["pair", World.secure, "--passkey", "123456"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject()?["paired"] == true)
            let state = try await sim.state()
            #expect(state.connections.map(\.address) == [World.secure])
            try #expect(await Self.pairingCalls(sim) == ["RegisterAgent", "Pair", "UnregisterAgent"])
            try await sim.expectClean()
        }
    }

    @Test("--format text: key: value lines")
    func textFormat() async throws {
        try await Sim.with(faults: World.secureFaults) { sim in
            let run = await sim.blectl(["pair", World.secure, "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "address: C0:FF:EE:00:00:07\npaired:  yes\nbonded:  yes\ntrusted: no\n")
        }
    }

    @Test("unpair: the device and its pairing gone; a second unpair exits 2 (device_not_found)")
    func unpair() async throws {
        try await Sim.with(faults: World.secureFaults) { sim in
            #expect(await sim.blectl(["pair", World.secure]).status == 0)
            // The link Pair opened is disconnected by BlueZ after blectl has gone.
            try #expect(await sim.waitForState(timeout: .seconds(10)) { $0.connections.isEmpty })
            let callsBefore = try await sim.calls().count
            let run = await sim.blectl(["unpair", World.secure])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == ["address": "C0:FF:EE:00:00:07", "removed": true, "was_paired": true, "was_connected": false])
            #expect(topLevelKeys(run.stdout) == ["address", "removed", "was_paired", "was_connected"])
            let state = try await sim.state()
            #expect(!state.devices.contains(World.secure))
            #expect(state.paired == [])
            let again = await sim.blectl(["unpair", World.secure])
            #expect(again.status == 2, "\(again)")
            #expect(again.stdout == "")
            #expect(again.jsonError()?["code"] == "device_not_found")
            let unpairCalls = try await sim.calls().dropFirst(callsBefore).map(\.member)
            #expect(unpairCalls.filter { $0 != "GetManagedObjects" } == ["RemoveDevice", "RemoveDevice"], "\(unpairCalls)")
            // Found again by scanning, the device is not paired any more.
            let paired = await sim.blectl(["pair", World.secure, "--passkey", "123456"])
            #expect(paired.status == 0, "\(paired)")
            try #expect(await sim.state().agentCalls?.count == 1, "pairing again asked the agent")
        }
    }

    @Test("unpair of a connected device: disconnected first, then removed")
    func unpairConnected() async throws {
        try await Sim.with(faults: ["preconnected": World.probe]) { sim in
            let run = await sim.blectl(["unpair", World.probe, "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "address:       C0:FF:EE:00:00:01\nremoved:       yes\nwas_paired:    no\nwas_connected: yes\n")
            let state = try await sim.state()
            #expect(state.connections.isEmpty)
            #expect(!state.devices.contains(World.probe))
        }
    }

    @Test("interrupted while Pair is pending: CancelPairing, the agent unregistered, the link closed", arguments: [SIGINT, SIGTERM])
    func interrupted(_ signal: Int32) async throws {
        try await Sim.with(faults: World.secureFaults.merging(["pair_never_completes": "1"]) { $1 }) { sim in
            let process = try await sim.launch(["pair", World.secure, "--passkey", "123456", "--timeout", "30"])
            try #expect(await sim.waitForState(timeout: .seconds(10)) { $0.pairings?.map(\.stage) == ["exchange"] }, "Pair never pending")
            let agents = try await sim.state().agents ?? []
            #expect(agents.map(\.capability) == ["KeyboardOnly"])
            #expect(agents.map(\.path) == ["/org/blectl/agent"])
            #expect(agents.map(\.client) == (try await sim.state().pairings ?? []).map(\.client), "the agent is the Pair caller's own")
            process.sendSignal(signal)
            let result = try await process.finish()
            #expect(result.stdout == "")
            try await SignalTests.expectInterrupted(result, by: signal, sim: sim)
            try #expect(await Self.pairingCalls(sim) == ["RegisterAgent", "Pair", "CancelPairing", "UnregisterAgent", "Disconnect"])
            let pair = try await sim.calls().first { $0.member == "Pair" }
            #expect(pair?.outcome == "error:org.bluez.Error.AuthenticationCanceled")
            try #expect(await sim.state().paired == [])
        }
    }

    @Test("interrupted while Pair is still connecting: the connection attempt stopped too")
    func interruptedWhileConnecting() async throws {
        try await Sim.with(faults: World.secureFaults.merging(["connect_never_answers": "1"]) { $1 }) { sim in
            let process = try await sim.launch(["pair", World.secure, "--timeout", "30"])
            try #expect(await sim.waitForState(timeout: .seconds(10)) { $0.pairings?.map(\.stage) == ["connecting"] }, "Pair never connecting")
            try #expect(await sim.state().agents?.map(\.capability) == ["NoInputNoOutput"])
            try #expect(await sim.state().pendingConnects == [World.secure])
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            try #expect(await Self.pairingCalls(sim) == ["RegisterAgent", "Pair", "CancelPairing", "UnregisterAgent", "Disconnect"])
        }
    }

    @Test("a pairing cancelled by another program: 77 authentication_failed (AuthenticationCanceled), the link closed")
    func cancelledElsewhere() async throws {
        try await Sim.with(faults: World.secureFaults.merging(["pair_never_completes": "1"]) { $1 }) { sim in
            let process = try await sim.launch(["pair", World.secure, "--timeout", "30"])
            try #expect(await sim.waitForState(timeout: .seconds(10)) { $0.pairings?.map(\.stage) == ["exchange"] }, "Pair never pending")
            let simulator = sim.simulator
            let cancel = try await offThread {
                simulator.run("/usr/bin/dbus-send", ["--system", "--print-reply", "--dest=org.bluez", World.securePath,
                                                     "org.bluez.Device1.CancelPairing"])
            }
            #expect(cancel.status == 0, "\(cancel)")
            let result = try await process.finish()
            let run = Run(arguments: ["pair"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 77, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "authentication_failed")
            #expect(error["operation"] == "pair")
            #expect(error["dbus_error"] == "org.bluez.Error.AuthenticationCanceled")
            try await sim.expectClean()
            // blectl sent no CancelPairing of its own: the Pair had ended.
            try #expect(await sim.calls().filter { $0.member == "CancelPairing" }.count == 1)
        }
    }

    @Test("blectl killed (SIGKILL) during a pending Pair: bluetoothd drops its agent and the Pair, and disconnects")
    func killed() async throws {
        try await Sim.with(faults: World.secureFaults.merging(["pair_never_completes": "1"]) { $1 }) { sim in
            let process = try await sim.launch(["pair", World.secure, "--passkey", "123456", "--timeout", "30"])
            try #expect(await sim.waitForState(timeout: .seconds(10)) { $0.pairings?.map(\.stage) == ["exchange"] }, "Pair never pending")
            process.sendSignal(SIGKILL)
            _ = try await process.finish()
            try await sim.expectClean()
            let pair = try await sim.calls().first { $0.member == "Pair" }
            #expect(pair?.outcome == "dropped", "nobody left to answer")
            try #expect(await sim.state().paired == [])
        }
    }

    @Test("--timeout during a pending Pair: 124 naming pair, CancelPairing, nothing left")
    func timesOut() async throws {
        try await Sim.with(faults: World.secureFaults.merging(["pair_never_completes": "1"]) { $1 }) { sim in
            let run = await sim.blectl(["pair", World.secure, "--timeout", "5"])
            #expect(run.status == 124, "\(run)")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "timed_out")
            #expect(error["operation"] == "pair")
            #expect(error["address"] == "C0:FF:EE:00:00:07")
            try await sim.expectClean()
            try #expect(await Self.pairingCalls(sim) == ["RegisterAgent", "Pair", "CancelPairing", "UnregisterAgent", "Disconnect"])
        }
    }

    @Test("a device BlueZ does not know is found by scanning first; one nobody hears is not found (2)")
    func notFound() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["pair", World.secure, "--timeout", "5"])
            #expect(run.status == 2, "\(run)")
            #expect(run.jsonError()?["code"] == "device_not_found")
            try #expect(await Self.pairingCalls(sim) == [], "nothing registered for a device never found")
            try await sim.expectClean()
        }
    }
}

/// Two programs pairing one device at once (found by a reviewer trying to break blectl):
/// the one BlueZ refuses (InProgress, exit 5) leaves the other's pairing and link alone; it
/// used to send Disconnect and make the other fail with AuthenticationCanceled.
@Suite struct PairRaceTests {
    @Test func theLoserOfTwoPairingsLeavesTheWinnersLinkAlone() async throws {
        try await Sim.with(faults: World.secureFaults.merging(["pair_never_completes": "1"]) { $1 }) { sim in
            let first = try await sim.launch(["pair", World.secure, "--passkey", "123456", "--timeout", "30"])
            try #expect(await sim.waitForState(timeout: .seconds(20)) { $0.pairings?.map(\.stage) == ["exchange"] }, "Pair never pending")
            let second = await sim.blectl(["pair", World.secure, "--passkey", "123456", "--timeout", "30"])
            #expect(second.status == 5, "\(second)")
            let calls = try await sim.calls()
            let loser = calls.first { $0.member == "Pair" && $0.outcome.hasPrefix("error:") }?.sender
            #expect(loser != nil, "\(calls)")
            #expect(!calls.contains { $0.member == "Disconnect" && $0.sender == loser }, "the loser disconnected the winner's link: \(calls)")
            try #expect(await sim.state().pairings?.map(\.stage) == ["exchange"], "the first pairing did not survive")
            first.sendSignal(SIGINT)
            let end = try await first.finish(timeout: .seconds(20))
            #expect(end.status == 130, "\(end)")
            try await sim.scenarioExpectClean()
        }
    }
}
