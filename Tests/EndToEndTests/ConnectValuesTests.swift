// `blectl connect --values`: every readable value read into the GATT tree (exact values from
// sim/README.md's devices), an attribute's own failure kept in the tree, a lost link, the
// deadline and SIGINT ending the command with nothing printed, and the clone served. That
// the output is a profile the schema accepts: ProfileSchemaTests.

import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl connect --values")
struct ConnectValuesTests {
    /// A CCC descriptor read while nothing is subscribed: 00 00.
    static let ccc: J = ["uuid": "2902", "name": "Client Characteristic Configuration", "value": "0000"]

    /// blesim Probe's tree with its values (sim/README.md, Default world): Battery Level 87,
    /// the Device Information strings "1.4.2", "Blesim Labs", "Probe-1"; the vendor service's
    /// characteristics cannot be read (write, notify), so they have no value.
    static let probeProfile: J = [
        "address": "C0:FF:EE:00:00:01", "name": "blesim Probe", "address_type": "public", "adapter": "hci0",
        "was_connected": false,
        "services": [
            ["uuid": "1801", "name": "GATT", "primary": true, "characteristics": [
                ["uuid": "2a05", "name": "Service Changed", "flags": ["indicate"], "descriptors": [ccc]],
            ]],
            ["uuid": "180f", "name": "Battery", "primary": true, "characteristics": [
                ["uuid": "2a19", "name": "Battery Level", "flags": ["read", "notify"], "value": "57", "descriptors": [ccc]],
            ]],
            ["uuid": "180a", "name": "Device Information", "primary": true, "characteristics": [
                ["uuid": "2a26", "name": "Firmware Revision String", "flags": ["read"], "value": "312e342e32", "descriptors": []],
                ["uuid": "2a29", "name": "Manufacturer Name String", "flags": ["read"], "value": "426c6573696d204c616273",
                 "descriptors": []],
                ["uuid": "2a24", "name": "Model Number String", "flags": ["read"], "value": "50726f62652d31", "descriptors": []],
            ]],
            ["uuid": .string(World.vendorService), "name": .null, "primary": true, "characteristics": [
                ["uuid": .string(World.vendorWrite), "name": .null, "flags": ["write-without-response", "write"], "descriptors": []],
                ["uuid": .string(World.vendorNotify), "name": .null, "flags": ["notify"], "descriptors": [ccc]],
            ]],
        ],
    ]

    /// Why blesim Toolbox's 5a1e0103 cannot be read before pairing, as value_error says it.
    static let notPaired = "read not permitted: org.bluez.Error.NotPermitted: Not paired (the device wants pairing or encryption: "
        + "try 'blectl pair C0:FF:EE:00:00:06')"

    /// blesim Toolbox's services with their values (sim/README.md, toolbox_device): the
    /// 0x2901 descriptor "Greeting", an empty value, a read refused until paired, 0x2A19 in
    /// two services (33 and 99).
    static let toolboxServices: J = [
        ["uuid": "1801", "name": "GATT", "primary": true, "characteristics": [
            ["uuid": "2a05", "name": "Service Changed", "flags": ["indicate"], "descriptors": [ccc]],
        ]],
        ["uuid": "180f", "name": "Battery", "primary": true, "characteristics": [
            ["uuid": "2a19", "name": "Battery Level", "flags": ["read", "notify"], "value": "21", "descriptors": [ccc]],
        ]],
        ["uuid": .string(World.toolboxService), "name": .null, "primary": true, "characteristics": [
            ["uuid": .string(World.toolboxText), "name": .null, "flags": ["read", "write"], "value": "68656c6c6f2c20746f6f6c626f78",
             "descriptors": [["uuid": "2901", "name": "Characteristic User Description", "value": "4772656574696e67"]]],
            ["uuid": .string(World.toolboxCommand), "name": .null, "flags": ["read", "write-without-response"], "value": "",
             "descriptors": []],
            ["uuid": .string(World.toolboxSecure), "name": .null, "flags": ["read", "write"], "value": .null,
             "value_error": .string(notPaired), "descriptors": []],
            ["uuid": "2a19", "name": "Battery Level", "flags": ["read"], "value": "63", "descriptors": []],
        ]],
    ]

    @Test("JSON: blesim Probe's tree with every readable value; only those read; disconnected afterwards")
    func probeValues() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["connect", World.probe, "--values"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == Self.probeProfile)
            // value after flags, before descriptors, in the line as printed.
            #expect(run.stdout.contains(#""flags":["read","notify"],"value":"57","descriptors":[{"uuid":"2902","#), "\(run)")
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == ["Connect", "Disconnect"])
            // The four readable characteristics and the three CCCs, one ReadValue each, in the tree's order.
            let reads = calls.filter { $0.member == "ReadValue" }
            #expect(reads.map(\.interface) == ["org.bluez.GattDescriptor1", "org.bluez.GattCharacteristic1", "org.bluez.GattDescriptor1"]
                + Array(repeating: "org.bluez.GattCharacteristic1", count: 3) + ["org.bluez.GattDescriptor1"], "\(reads)")
            #expect(reads.allSatisfy { $0.outcome == "reply" }, "\(reads)")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("JSON: a read the device refuses is value null and value_error; the rest is read, exit 0")
    func toolboxValues() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["connect", World.toolbox, "--values"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let object = try #require(run.jsonObject())
            #expect(object["services"] == Self.toolboxServices)
            #expect(run.stdout.contains(#""flags":["read","write"],"value":null,"value_error":"\#(Self.notPaired)","descriptors":[]"#),
                    "\(run)")
            let refused = try await sim.calls().filter { $0.member == "ReadValue" && $0.outcome != "reply" }
            #expect(refused.map(\.outcome) == ["error:org.bluez.Error.NotPermitted"], "\(refused)")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("--format text: each value after its characteristic's or descriptor's line")
    func toolboxText() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["connect", World.toolbox, "--values", "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines == [
                "address:       C0:FF:EE:00:00:06",
                "name:          blesim Toolbox",
                "address_type:  public",
                "adapter:       hci0",
                "was_connected: no",
                "services:      3",
                "  service 1801 (GATT)  primary",
                "    characteristic 2a05 (Service Changed)  [indicate]",
                "      descriptor 2902 (Client Characteristic Configuration)  value: 0000",
                "  service 180f (Battery)  primary",
                "    characteristic 2a19 (Battery Level)  [read, notify]  value: 21",
                "      descriptor 2902 (Client Characteristic Configuration)  value: 0000",
                "  service \(World.toolboxService)  primary",
                "    characteristic \(World.toolboxText)  [read, write]  value: 68656c6c6f2c20746f6f6c626f78",
                "      descriptor 2901 (Characteristic User Description)  value: 4772656574696e67",
                "    characteristic \(World.toolboxCommand)  [read, write-without-response]  value: (empty)",
                "    characteristic \(World.toolboxSecure)  [read, write]  value_error: \(Self.notPaired)",
                "    characteristic 2a19 (Battery Level)  [read]  value: 63",
            ])
            try await sim.scenarioExpectClean()
        }
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        let label: String
        let faults: [String: String]
        let arguments: [String]
        let status: Int32
        let error: J
        let message: String
        var testDescription: String { label }
    }

    @Test("a read that ends the command: nothing printed, the error as read's, nothing left", arguments: [
        Failure(label: "the link lost during a read (disconnect_mid_read)", faults: ["disconnect_mid_read": "1"],
                arguments: ["connect", World.probe, "--values"], status: 4,
                error: scenarioError("disconnected", 4, retryable: true, operation: "read", address: World.probe, service: "180f",
                                     characteristic: "2a19"),
                message: "disconnected during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01"),
        Failure(label: "a read never answered: --timeout reached", faults: ["read_never_answers": "1"],
                arguments: ["connect", World.probe, "--values", "--timeout", "5"], status: 124,
                error: scenarioError("timed_out", 124, operation: "read", address: World.probe, service: "180f", characteristic: "2a19"),
                message: "timed out during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01"),
        Failure(label: "a descriptor read never answered: --timeout reached",
                faults: World.toolboxFaults.merging(["descriptor_read_never_answers": "1"]) { $1 },
                arguments: ["connect", World.toolbox, "--values", "--timeout", "5"], status: 124,
                error: scenarioError("timed_out", 124, operation: "read", address: World.toolbox, service: World.toolboxService,
                                     characteristic: World.toolboxText),
                message: "timed out during read of descriptor 2901 (Characteristic User Description) of characteristic "
                    + "\(World.toolboxText) in service \(World.toolboxService) on C0:FF:EE:00:00:06"),
    ])
    func failure(_ c: Failure) async throws {
        try await Sim.with(faults: c.faults) { sim in
            let run = await sim.blectl(c.arguments)
            #expect(run.status == c.status, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, c.error, message: c.message)
            try await sim.scenarioExpectClean()
        }
    }

    @Test("the clone: serve takes connect --values' output as it is; the simulated central reads the probe's values from it")
    func cloneServed() async throws {
        try await Sim.with { sim in
            let probe = await sim.blectl(["connect", World.probe, "--values"])
            #expect(probe.status == 0, "\(probe)")
            let process = try await ServeTests.launch(sim, profile: probe.stdout)
            try await sim.simulator.centralConnect()
            #expect(try await sim.simulator.centralRead("2a19").value == "57")
            #expect(try await sim.simulator.centralRead("2a29").value == "426c6573696d204c616273")
            try await sim.simulator.centralDisconnect()
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            // bluetoothd's own 1801 and CCCs left out; the rest served and advertised under the probe's name.
            #expect(ServeTests.events(result.stdout).first == [
                "event": "registered", "adapter": "hci0", "path": .string(ServeTests.app),
                "services": ["180f", "180a", .string(World.vendorService)], "characteristics": 6, "advertising": true,
                "name": "blesim Probe", "advertised_services": ["180f", "180a", .string(World.vendorService)],
                "skipped": [["line": 1, "field": "services[0]", "uuid": "1801", "reason": "bluetoothd serves 1801 itself"],
                            ["line": 1, "field": "services[1].characteristics[0].descriptors[0]", "uuid": "2902",
                             "reason": "bluetoothd makes 2902 itself"],
                            ["line": 1, "field": "services[3].characteristics[1].descriptors[0]", "uuid": "2902",
                             "reason": "bluetoothd makes 2902 itself"]],
                "unread": [],
            ])
        }
    }

    @Test("SIGINT while a read is pending: 130, nothing printed, disconnected")
    func interrupted() async throws {
        try await Sim.with(faults: ["read_never_answers": "1"]) { sim in
            let process = try await sim.launch(["connect", World.probe, "--values"])
            try #expect(await sim.waitForState { !$0.pendingGATT.isEmpty }, "no read pending")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.stdout == "")
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            try #expect(await sim.calls().deviceMembers == ["Connect", "Disconnect"])
        }
    }
}
