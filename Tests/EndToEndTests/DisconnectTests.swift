// `blectl disconnect`: a link another client made is closed and waited for; a device that
// is not connected, or unknown to BlueZ, is success with was_connected false, and blectl
// never scans for it.

import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl disconnect")
struct DisconnectTests {
    @Test("a device another client connected: disconnected, the link down when blectl exits")
    func connectedBySomeoneElse() async throws {
        try await Sim.with(faults: ["preconnected": World.probe]) { sim in
            let run = await sim.blectl(["disconnect", World.probe])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == ["address": .string(World.probe), "was_connected": true])
            #expect(topLevelKeys(run.lines.first ?? "") == ["address", "was_connected"])
            // BlueZ answers Disconnect once the link is down: it is gone already.
            let state = try await sim.state()
            #expect(state.connections.isEmpty, "\(state.connections)")
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == ["Disconnect"])
            #expect(calls.scenarioOutcomes("Disconnect") == ["reply"])
            #expect(!calls.contains { $0.member == "StartDiscovery" })
        }
    }

    @Test("--format text, connected and not")
    func text() async throws {
        try await Sim.with(faults: ["preconnected": World.probe]) { sim in
            let first = await sim.blectl(["disconnect", World.probe, "--format", "text"])
            #expect(first.status == 0, "\(first)")
            #expect(first.stdout == "address:       C0:FF:EE:00:00:01\nwas_connected: yes\n")
            let second = await sim.blectl(["--format", "text", "disconnect", World.probe])
            #expect(second.status == 0, "\(second)")
            #expect(second.stdout == "address:       C0:FF:EE:00:00:01\nwas_connected: no\n")
        }
    }

    @Test("a device BlueZ knows but that is not connected: was_connected false, nothing sent")
    func knownNotConnected() async throws {
        try await Sim.with(faults: ["cached_devices": "1"]) { sim in
            let run = await sim.blectl(["disconnect", "C0:FF:EE:00:00:A1"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == ["address": "C0:FF:EE:00:00:A1", "was_connected": false])
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == [])
            #expect(!calls.contains { $0.member == "StartDiscovery" })
        }
    }

    @Test("a device unknown to BlueZ: was_connected false, exit 0, no scan")
    func unknownDevice() async throws {
        try await Sim.with { sim in
            let started = ContinuousClock.now
            let run = await sim.blectl(["disconnect", World.missing])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == ["address": .string(World.missing), "was_connected": false])
            // Only the object tree was read: no discovery, nothing sent to a device.
            let calls = try await sim.calls()
            #expect(Set(calls.map(\.member)) == ["GetManagedObjects"], "\(calls.map(\.member))")
            #expect(ContinuousClock.now - started < .seconds(10))
            try await sim.scenarioExpectClean()
        }
    }

    @Test("after blectl's own connection ended: was_connected false")
    func afterARead() async throws {
        try await Sim.with { sim in
            let read = await sim.blectl(["read", World.probe, "2a19"])
            #expect(read.status == 0, "\(read)")
            // The read left its Disconnect with BlueZ, which ends the link after its timer.
            try #expect(await sim.waitForState(timeout: .seconds(10)) { $0.connections.isEmpty })
            let run = await sim.blectl(["disconnect", World.probe])
            #expect(run.jsonObject() == ["address": .string(World.probe), "was_connected": false])
            try #expect(await sim.calls().deviceMembers == ["Connect", "Disconnect"], "the read's own pair only")
        }
    }

    /// bluetoothd 5.66 answers Disconnect after its disconnect timer and keeps the link,
    /// ServicesResolved and its GATT client until then, refusing only StartNotify
    /// (NotConnected). After a failure blectl waits 0.4 s at most for its Disconnect, so a
    /// command started right after finds the device connected: a read is answered on that
    /// link (not blectl's own: no Disconnect of its own); a request's StartNotify is refused
    /// there, so it waits for the link to go down, connects anew and disconnects that link.
    /// As measured on the real bluetoothd (realbluez/README.md, "The tests").
    @Test("right after a failed command: the link BlueZ is still disconnecting is used; StartNotify refused, then a new link")
    func duringBlueZDisconnectTimer() async throws {
        // BlueZ's timer held by state (disconnect_held) until the request has been refused, not
        // a 6 s delay that two instrumented commands on a loaded machine may outlast (the read
        // would then connect anew).
        try await Sim.with(faults: ["disconnect_held": "1"], fastDisconnect: false) { sim in
            let failed = await sim.blectl(["read", World.probe, "2a00"])
            #expect(failed.status == 3, "\(failed)")
            try #expect(await sim.state().connections.first?.disconnecting == true, "BlueZ is still disconnecting")
            let read = await sim.blectl(["read", World.probe, "2a19"])
            #expect(read.status == 0, "\(read)")
            #expect(read.jsonObject()?["value"] == "57", "\(read)")
            let process = try await sim.launch(["request", World.probe, "01", "--write", World.vendorWrite, "--notify", World.vendorNotify])
            let refused = try await sim.scenarioWaitForCall { $0.member == "StartNotify" && $0.outcome == "error:org.bluez.Error.NotConnected" }
            #expect(refused, "StartNotify was not refused on the disconnecting link")
            try await sim.setFault("disconnect_held", "0")
            let request = Run(arguments: ["request"], result: try await process.finish(timeout: .seconds(30)))
            #expect(request.status == 0, "\(request)")
            #expect(request.stderr == "")
            #expect(request.jsonObject()?["responses"] == [["value": "81010402", "text": .null]], "\(request)")
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == ["Connect", "Disconnect", "Connect", "Disconnect"],
                    "the failed read's Connect and Disconnect, then the request's own link (the read used none)")
            #expect(calls.scenarioOutcomes("StartNotify") == ["error:org.bluez.Error.NotConnected", "reply"])
            try #expect(await sim.waitForState(timeout: .seconds(10)) { $0.connections.isEmpty })
            try await sim.expectClean()
        }
    }

    @Test("BlueZ slower than --timeout: 124 naming the disconnect")
    func timedOut() async throws {
        // The disconnection is held by state (disconnect_held), not by a delay the set-up
        // might outlast on a loaded machine; 5 s leave the stages before it time to finish.
        try await Sim.with(faults: ["preconnected": World.probe, "disconnect_held": "1"], fastDisconnect: false) { sim in
            let run = await sim.blectl(["disconnect", World.probe, "--timeout", "5"])
            #expect(run.status == 124, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, scenarioError("timed_out", 124, operation: "disconnect", address: World.probe),
                                message: "timed out waiting for the link to go down on C0:FF:EE:00:00:01")
            try #expect(await sim.calls().scenarioOutcomes("Disconnect") == ["pending"])
            try #expect(await sim.state().connections.first?.disconnecting == true)
            // The Disconnect is BlueZ's now: it completes on its own once BlueZ goes on.
            try await sim.setFault("disconnect_held", "0")
            try #expect(await sim.waitForState { $0.connections.isEmpty })
        }
    }

    @Test("SIGINT while BlueZ disconnects: 130, nothing printed, the link still goes down", arguments: [SIGINT, SIGTERM])
    func interrupted(_ signal: Int32) async throws {
        // The disconnection held by state until blectl has ended, not a 3 s delay: the signal
        // must come while BlueZ is still disconnecting, however slow the machine.
        try await Sim.with(faults: ["preconnected": World.probe, "disconnect_held": "1"], fastDisconnect: false) { sim in
            let process = try await sim.launch(["disconnect", World.probe])
            try #expect(await sim.waitForState { $0.connections.first?.disconnecting == true }, "no Disconnect seen")
            process.sendSignal(signal)
            let result = try await process.finish()
            #expect(result.status == 128 + signal, "\(result.status) \(result.stderr)")
            #expect(result.stdout == "")
            #expect(result.stderr == "")
            try await sim.setFault("disconnect_held", "0")
            try #expect(await sim.waitForState(timeout: .seconds(30)) { $0.connections.isEmpty })
            try await sim.expectClean()
        }
    }

    @Test("usage errors: 64", arguments: [
        (["disconnect"], "Error: Missing expected argument '<address>'"),
        (["disconnect", "C0:FF:EE:00:00"], "Error: Invalid address 'C0:FF:EE:00:00': expected six hex pairs like C0:FF:EE:00:00:01"),
        (["disconnect", World.probe, "--timeout", "soon"],
         "Error: Invalid value 'soon' for '--timeout': expected a number of seconds (decimals allowed), 0 or more"),
    ])
    func usage(arguments: [String], firstLine: String) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(arguments)
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr.split(separator: "\n").first.map(String.init) == firstLine)
            try #expect(await sim.calls() == [])
        }
    }
}
