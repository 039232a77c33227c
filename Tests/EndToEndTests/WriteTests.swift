// `blectl write`: with and without response, hex in every spelling and --text, the bytes
// read back; flags that do not allow the write refused before anything is sent (3);
// pairing wanted (77), timeout (124), SIGINT (130); nothing left behind.

import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl write")
struct WriteTests {
    static let writeKeys = ["address", "service", "characteristic", "length", "type"]

    @Test("--text, with response: the record, then the same bytes read back")
    func textRoundTrip() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["write", World.toolbox, World.toolboxText, "hi there ☃", "--text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == [
                "address": .string(World.toolbox), "service": .string(World.toolboxService), "characteristic": .string(World.toolboxText),
                "length": 12, "type": "request",
            ])
            #expect(topLevelKeys(run.lines.first ?? "") == Self.writeKeys)
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == ["Connect", "Disconnect"])
            #expect(calls.scenarioOutcomes("WriteValue") == ["reply"])
            try await sim.scenarioExpectClean()

            let back = await sim.blectl(["read", World.toolbox, World.toolboxText])
            #expect(back.jsonObject()?["value"] == "686920746865726520e29883")
            #expect(back.jsonObject()?["text"] == "hi there ☃")
        }
    }

    @Test("--without-response, hex in each spelling: a Write Command of exactly those bytes", arguments: [
        "0102ff", "01:02:FF", "0x0102ff",
    ])
    func withoutResponse(value: String) async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["write", World.toolbox, World.toolboxCommand, value, "--without-response"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == [
                "address": .string(World.toolbox), "service": .string(World.toolboxService),
                "characteristic": .string(World.toolboxCommand), "length": 3, "type": "command",
            ])
            // The simulator refuses a Write Request on this characteristic (no write flag):
            // this reply means a Write Command was sent.
            try #expect(await sim.calls().scenarioOutcomes("WriteValue") == ["reply"])
            let back = await sim.blectl(["read", World.toolbox, World.toolboxCommand])
            #expect(back.jsonObject()?["value"] == "0102ff")
            #expect(back.jsonObject()?["text"] == .null)
            try await sim.scenarioExpectClean()
        }
    }

    @Test("--format text")
    func text() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["write", World.toolbox, World.toolboxCommand, "--service", World.toolboxService, "64",
                                        "--without-response", "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines == [
                "address:        C0:FF:EE:00:00:06", "service:        \(World.toolboxService)",
                "characteristic: \(World.toolboxCommand)", "length:         1", "type:           command",
            ])
        }
    }

    @Test("a device connected before blectl ran is written and left connected")
    func preconnectedLeftConnected() async throws {
        try await Sim.with(faults: World.toolboxFaults.merging(["preconnected": World.toolbox]) { $1 }) { sim in
            let run = await sim.blectl(["write", World.toolbox, World.toolboxText, "00"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject()?["length"] == 1)
            try #expect(await sim.calls().deviceMembers == [])
            try #expect(await sim.state().connections.map(\.address) == [World.toolbox])
        }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var label: String
        var arguments: [String]
        var address: String
        var service: String
        var characteristic: String
        var message: String
        var testDescription: String { label }
    }

    @Test("flags that do not allow the write: 3 naming the flags, nothing sent, nothing left", arguments: [
        Refusal(label: "with response on a write-without-response characteristic",
                arguments: ["write", World.toolbox, World.toolboxCommand, "01"], address: World.toolbox, service: World.toolboxService,
                characteristic: World.toolboxCommand,
                message: "not supported by the device: characteristic \(World.toolboxCommand) in service \(World.toolboxService) on C0:FF:EE:00:00:06 cannot be written with response (flags: read write-without-response)"),
        Refusal(label: "without response on a write-only-with-response characteristic",
                arguments: ["write", World.toolbox, World.toolboxText, "01", "--without-response"], address: World.toolbox,
                service: World.toolboxService, characteristic: World.toolboxText,
                message: "not supported by the device: characteristic \(World.toolboxText) in service \(World.toolboxService) on C0:FF:EE:00:00:06 cannot be written without response (flags: read write)"),
        // bluetoothd would pass this on (the rig's peripheral took such a write): the Battery Level.
        Refusal(label: "a read/notify characteristic", arguments: ["write", World.probe, "2a19", "00"], address: World.probe,
                service: "180f", characteristic: "2a19",
                message: "not supported by the device: characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01 cannot be written with response (flags: read notify)"),
    ])
    func refused(_ c: Refusal) async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(c.arguments)
            #expect(run.status == 3, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, scenarioError("not_supported", 3, operation: "write", address: c.address, service: c.service,
                                                   characteristic: c.characteristic),
                                message: c.message)
            try await sim.expectNothingSent()
            try await sim.scenarioExpectClean()
        }
    }

    @Test("0x2A19 in two services: 64, nothing written")
    func ambiguity() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["write", World.toolbox, "2a19", "00"])
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, scenarioError("usage", 64, operation: "service_lookup", address: World.toolbox, characteristic: "2a19"),
                                mentions: ["(180f (Battery), \(World.toolboxService)): choose one with --service"])
            try await sim.expectNothingSent()
            try await sim.scenarioExpectClean()
        }
    }

    @Test("wants pairing: 77 not_permitted with the pair hint")
    func notPermitted() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["write", World.toolbox, World.toolboxSecure, "01"])
            #expect(run.status == 77, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, scenarioError("not_permitted", 77, operation: "write", address: World.toolbox, service: World.toolboxService,
                                                   characteristic: World.toolboxSecure, dbusError: "org.bluez.Error.NotPermitted"),
                                message: "write of characteristic \(World.toolboxSecure) in service \(World.toolboxService) on C0:FF:EE:00:00:06 not permitted: org.bluez.Error.NotPermitted: Not paired (the device wants pairing or encryption: try 'blectl pair C0:FF:EE:00:00:06')")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("an unknown device: 2 once the timeout ran out scanning, nothing sent")
    func notFound() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["write", World.missing, "2a19", "00", "--timeout", "5"])
            #expect(run.status == 2, "\(run)")
            scenarioExpectError(run, scenarioError("device_not_found", 2, retryable: true, operation: "device_lookup", address: World.missing),
                                message: "device C0:FF:EE:00:00:99 not found")
            try #expect(await sim.calls().deviceMembers == [])
            try await sim.scenarioExpectClean()
        }
    }

    @Test("a write never answered: 124 naming the write")
    func timedOut() async throws {
        try await Sim.with(faults: World.toolboxFaults.merging(["write_never_answers": "1"]) { $1 }) { sim in
            let run = await sim.blectl(["write", World.toolbox, World.toolboxText, "01", "--timeout", "5"])
            #expect(run.status == 124, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, scenarioError("timed_out", 124, operation: "write", address: World.toolbox, service: World.toolboxService,
                                                   characteristic: World.toolboxText),
                                message: "timed out during write of characteristic \(World.toolboxText) in service \(World.toolboxService) on C0:FF:EE:00:00:06")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("SIGINT while the write is pending: 130, nothing printed, nothing left", arguments: [SIGINT, SIGTERM])
    func interrupted(_ signal: Int32) async throws {
        try await Sim.with(faults: World.toolboxFaults.merging(["write_never_answers": "1"]) { $1 }) { sim in
            let process = try await sim.launch(["write", World.toolbox, World.toolboxText, "01"])
            try #expect(await sim.waitForState { $0.pendingGATT.map(\.op) == ["WriteValue"] }, "no write pending")
            process.sendSignal(signal)
            let result = try await process.finish()
            #expect(result.stdout == "")
            try await SignalTests.expectInterrupted(result, by: signal, sim: sim)
            try #expect(await sim.calls().deviceMembers == ["Connect", "Disconnect"])
        }
    }

    @Test("usage errors: 64 before anything reaches BlueZ", arguments: [
        (["write", World.probe, "2a19", "0g"], "Error: Invalid value '0g': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)"),
        (["write", World.probe, "2a19", "01:2"], "Error: Invalid value '01:2': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)"),
        (["write", World.probe, "2a19"], "Error: Missing expected argument '<value>' (or --file)"),
        (["write", World.probe], "Error: Missing expected argument '<characteristic>'"),
        (["write", World.probe, "2a19", "", "--text"], "Error: Invalid value '': expected text of 1 to 512 bytes in UTF-8"),
    ])
    func usage(arguments: [String], firstLine: String) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(arguments)
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            let lines = run.stderr.split(separator: "\n").map(String.init)
            #expect(lines.first == firstLine)
            #expect(lines.dropFirst().first?.hasPrefix("Usage: blectl write <address> <characteristic> [<value>]") == true)
            #expect(lines.last == "  See 'blectl write --help' for more information.")
            try #expect(await sim.calls() == [])
        }
    }
}
