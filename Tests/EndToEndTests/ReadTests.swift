// `blectl read`: exact values (hex + text), descriptors, offsets, UUID forms, the service
// ambiguity (64), and every failure with its error object and nothing left behind.

import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl read")
struct ReadTests {
    static let readKeys = ["address", "service", "characteristic", "descriptor", "value", "text", "decoded"]

    @Test("Battery Level 87 = 0x57 'W': found by scanning, connected, read, disconnected")
    func batteryLevel() async throws {
        try await Sim.with { sim in
            try #expect(await sim.state().devices == [], "the device must be unknown to BlueZ at first")
            let run = await sim.blectl(["read", World.probe, "2a19"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == [
                "address": .string(World.probe), "service": "180f", "characteristic": "2a19", "descriptor": .null,
                "value": "57", "text": "W", "decoded": ["name": "Battery Level", "fields": [["name": "Battery Level", "value": 87, "unit": "percentage"]]],
            ])
            #expect(topLevelKeys(run.lines.first ?? "") == Self.readKeys)
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == ["Connect", "Disconnect"])
            #expect(calls.gattMembers == ["ReadValue"])
            #expect(calls.contains { $0.member == "StartDiscovery" })
            try await sim.scenarioExpectClean()
        }
    }

    @Test("the 32-bit and 128-bit forms of a UUID name the same characteristic", arguments: [
        "00002a19", "00002A19-0000-1000-8000-00805F9B34FB", "0x2a19",
    ])
    func uuidForms(form: String) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["read", World.probe, form])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject()?["value"] == "57")
            #expect(run.jsonObject()?["characteristic"] == "2a19")
        }
    }

    @Test("a device connected before blectl ran is read and left connected")
    func preconnectedLeftConnected() async throws {
        try await Sim.with(faults: ["preconnected": World.probe]) { sim in
            let run = await sim.blectl(["read", World.probe, "2a26"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == [
                "address": .string(World.probe), "service": "180a", "characteristic": "2a26", "descriptor": .null,
                "value": "312e342e32", "text": "1.4.2",
                "decoded": ["name": "Firmware Revision String", "fields": [["name": "Firmware Revision", "value": "1.4.2", "unit": .null]]],
            ])
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == [], "blectl connected or disconnected what it did not connect")
            let state = try await sim.state()
            #expect(state.connections.map(\.address) == [World.probe])
            #expect(state.connections.first?.disconnecting == false)
        }
    }

    @Test("--descriptor: the 0x2901 User Description of a 128-bit characteristic; the CCC of 2a19")
    func descriptors() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["read", World.toolbox, World.toolboxText, "--descriptor", "2901"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == [
                "address": .string(World.toolbox), "service": .string(World.toolboxService),
                "characteristic": .string(World.toolboxText), "descriptor": "2901", "value": "4772656574696e67", "text": "Greeting",
                "decoded": .null,
            ])
            // The first read's link gone (BlueZ's disconnect timer) before the second read: it
            // would otherwise read over that link and, on a slow machine (ASan), lose it midway
            // and read again on a new one, a third ReadValue this test is not about.
            try #expect(await sim.waitForState(timeout: .seconds(30)) { $0.connections.isEmpty })
            let ccc = await sim.blectl(["read", World.toolbox, "2a19", "--service", "180f", "--descriptor", "0x2902"])
            #expect(ccc.status == 0, "\(ccc)")
            // Not notifying: 00 00, which is not text (control characters).
            #expect(ccc.jsonObject() == [
                "address": .string(World.toolbox), "service": "180f", "characteristic": "2a19", "descriptor": "2902",
                "value": "0000", "text": .null, "decoded": .null,
            ])
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "ReadValue" }.map(\.interface) == ["org.bluez.GattDescriptor1", "org.bluez.GattDescriptor1"])
            try await sim.scenarioExpectClean()
        }
    }

    @Test("--offset: the value from that byte on; --format text")
    func offsetAsText() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["read", World.toolbox, World.toolboxText, "--offset", "7", "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines == [
                "address:        C0:FF:EE:00:00:06",
                "service:        \(World.toolboxService)",
                "characteristic: \(World.toolboxText)",
                "descriptor:     -",
                "value:          746f6f6c626f78",
                "text:           \"toolbox\"",
                "decoded:        -",
            ])
            let battery = await sim.blectl(["read", World.toolbox, "2a19", "--service", "180f", "--descriptor", "2902", "--format", "text"])
            #expect(battery.lines == [
                "address:        C0:FF:EE:00:00:06", "service:        180f (Battery)", "characteristic: 2a19 (Battery Level)",
                "descriptor:     2902 (Client Characteristic Configuration)", "value:          0000", "text:           -",
                "decoded:        -",
            ])
        }
    }

    @Test("--offset past the end: BlueZ's InvalidArguments 'Invalid offset', exit 1")
    func offsetPastTheEnd() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["read", World.toolbox, World.toolboxText, "--offset", "100"])
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, scenarioError("bluez_failed", 1, operation: "read", address: World.toolbox, service: World.toolboxService,
                                                   characteristic: World.toolboxText, dbusError: "org.bluez.Error.InvalidArguments"),
                                mentions: ["Invalid offset"])
            try await sim.scenarioExpectClean()
        }
    }

    @Test("0x2A19 in two services: exit 64 listing both, nothing read; --service picks one")
    func ambiguity() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["read", World.toolbox, "2a19"])
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, scenarioError("usage", 64, operation: "service_lookup", address: World.toolbox, characteristic: "2a19"),
                                message: "characteristic 2a19 (Battery Level) is in several services on C0:FF:EE:00:00:06 "
                                    + "(180f (Battery), \(World.toolboxService)): choose one with --service")
            try await sim.expectNothingSent()
            try await sim.scenarioExpectClean()

            let battery = await sim.blectl(["read", World.toolbox, "2a19", "--service", "180f"])
            #expect(battery.jsonObject() == [
                "address": .string(World.toolbox), "service": "180f", "characteristic": "2a19", "descriptor": .null, "value": "21", "text": "!",
                "decoded": ["name": "Battery Level", "fields": [["name": "Battery Level", "value": 33, "unit": "percentage"]]],
            ])
            let other = await sim.blectl(["read", World.toolbox, "2a19", "--service", World.toolboxService])
            #expect(other.jsonObject() == [
                "address": .string(World.toolbox), "service": .string(World.toolboxService), "characteristic": "2a19", "descriptor": .null,
                "value": "63", "text": "c", "decoded": ["name": "Battery Level", "fields": [["name": "Battery Level", "value": 99, "unit": "percentage"]]],
            ])
        }
    }

    @Test("--format text: the ambiguity is one 'blectl: error:' line")
    func ambiguityAsText() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["read", World.toolbox, "2a19", "--format", "text"])
            #expect(run.status == 64, "\(run)")
            #expect(run.stderr == "blectl: error: characteristic 2a19 (Battery Level) is in several services on C0:FF:EE:00:00:06 "
                + "(180f (Battery), \(World.toolboxService)): choose one with --service\n")
        }
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        var label: String
        var faults: [String: String] = [:]
        var arguments: [String]
        var status: Int32
        var error: J
        var message: String
        var testDescription: String { "\(status) \(label)" }
    }

    @Test("failures: the error object, nothing on stdout, nothing left", arguments: [
        Failure(label: "unknown device", arguments: ["read", World.missing, "2a19", "--timeout", "5"], status: 2,
                error: scenarioError("device_not_found", 2, retryable: true, operation: "device_lookup", address: World.missing),
                message: "device C0:FF:EE:00:00:99 not found"),
        Failure(label: "no such characteristic", arguments: ["read", World.probe, "2a00"], status: 3,
                error: scenarioError("not_supported", 3, operation: "service_lookup", address: World.probe, characteristic: "2a00"),
                message: "not supported by the device: no characteristic 2a00 (Device Name) on C0:FF:EE:00:00:01"),
        Failure(label: "no such characteristic in the service named", arguments: ["read", World.probe, "2a19", "--service", "180a"], status: 3,
                error: scenarioError("not_supported", 3, operation: "service_lookup", address: World.probe, service: "180a", characteristic: "2a19"),
                message: "not supported by the device: no characteristic 2a19 (Battery Level) in service 180a (Device Information) on C0:FF:EE:00:00:01"),
        Failure(label: "no such descriptor", arguments: ["read", World.probe, "2a19", "--descriptor", "2901"], status: 3,
                error: scenarioError("not_supported", 3, operation: "service_lookup", address: World.probe, service: "180f", characteristic: "2a19"),
                message: "not supported by the device: no descriptor 2901 (Characteristic User Description) on characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01"),
        Failure(label: "not readable (flags)", arguments: ["read", World.vendor, World.vendorWrite], status: 3,
                error: scenarioError("not_supported", 3, operation: "read", address: World.vendor, service: World.vendorService,
                                     characteristic: World.vendorWrite),
                message: "not supported by the device: characteristic \(World.vendorWrite) in service \(World.vendorService) on C0:FF:EE:00:00:02 cannot be read (flags: write-without-response write)"),
        Failure(label: "wants pairing (NotPermitted 'Not paired')", faults: World.toolboxFaults,
                arguments: ["read", World.toolbox, World.toolboxSecure], status: 77,
                error: scenarioError("not_permitted", 77, operation: "read", address: World.toolbox, service: World.toolboxService,
                                     characteristic: World.toolboxSecure, dbusError: "org.bluez.Error.NotPermitted"),
                message: "read of characteristic \(World.toolboxSecure) in service \(World.toolboxService) on C0:FF:EE:00:00:06 not permitted: org.bluez.Error.NotPermitted: Not paired (the device wants pairing or encryption: try 'blectl pair C0:FF:EE:00:00:06')"),
        Failure(label: "read never answered", faults: ["read_never_answers": "1"], arguments: ["read", World.probe, "2a19", "--timeout", "5"],
                status: 124, error: scenarioError("timed_out", 124, operation: "read", address: World.probe, service: "180f", characteristic: "2a19"),
                message: "timed out during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01"),
        Failure(label: "link lost during the read", faults: ["disconnect_mid_read": "1"], arguments: ["read", World.probe, "2a19"],
                status: 4, error: scenarioError("disconnected", 4, retryable: true, operation: "read", address: World.probe, service: "180f", characteristic: "2a19"),
                message: "disconnected during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01"),
    ])
    func failure(_ c: Failure) async throws {
        try await Sim.with(faults: c.faults) { sim in
            let run = await sim.blectl(c.arguments)
            #expect(run.status == c.status, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, c.error, message: c.message)
            #expect(topLevelKeys(String(run.stderr.dropFirst("{\"error\":".count))) == World.errorKeys)
            if c.status == 3 || c.status == 2 { try await sim.expectNothingSent() }
            try await sim.scenarioExpectClean()
        }
    }

    @Test("SIGINT while the read is pending: 130, nothing printed, nothing left")
    func interrupted() async throws {
        try await Sim.with(faults: ["read_never_answers": "1"]) { sim in
            let process = try await sim.launch(["read", World.probe, "2a19"])
            try #expect(await sim.waitForState { !$0.pendingGATT.isEmpty }, "no read pending")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.stdout == "")
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            try #expect(await sim.calls().deviceMembers == ["Connect", "Disconnect"])
        }
    }
}
