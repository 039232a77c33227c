// `blectl connect`: the GATT tree as one object, and the link left as it was found.

import SimulatorHarness
import Testing

@Suite("blectl connect")
struct ConnectTests {
    static let ccc: J = ["uuid": "2902", "name": "Client Characteristic Configuration"]

    /// blesim Probe's GATT tree (sim/README.md, Default world).
    static let probeTree: J = [
        "address": "C0:FF:EE:00:00:01", "name": "blesim Probe", "address_type": "public", "adapter": "hci0",
        "was_connected": false,
        "services": [
            ["uuid": "1801", "name": "GATT", "primary": true, "characteristics": [
                ["uuid": "2a05", "name": "Service Changed", "flags": ["indicate"], "descriptors": [ccc]],
            ]],
            ["uuid": "180f", "name": "Battery", "primary": true, "characteristics": [
                ["uuid": "2a19", "name": "Battery Level", "flags": ["read", "notify"], "descriptors": [ccc]],
            ]],
            ["uuid": "180a", "name": "Device Information", "primary": true, "characteristics": [
                ["uuid": "2a26", "name": "Firmware Revision String", "flags": ["read"], "descriptors": []],
                ["uuid": "2a29", "name": "Manufacturer Name String", "flags": ["read"], "descriptors": []],
                ["uuid": "2a24", "name": "Model Number String", "flags": ["read"], "descriptors": []],
            ]],
            ["uuid": .string(World.vendorService), "name": .null, "primary": true, "characteristics": [
                ["uuid": .string(World.vendorWrite), "name": .null, "flags": ["write-without-response", "write"], "descriptors": []],
                ["uuid": .string(World.vendorNotify), "name": .null, "flags": ["notify"], "descriptors": [ccc]],
            ]],
        ],
    ]

    @Test("JSON: the exact GATT tree; the device found by scanning; disconnected afterwards")
    func probeTreeJSON() async throws {
        try await Sim.with { sim in
            try #expect(await sim.state().devices == [], "the device must be unknown to BlueZ at first")
            let run = await sim.blectl(["connect", World.probe])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let object = try #require(run.jsonObject())
            #expect(object == Self.probeTree)
            #expect(topLevelKeys(run.lines[0]) == ["address", "name", "address_type", "adapter", "was_connected", "services"])
            // blectl made the connection, so it disconnected it (BlueZ completes that after
            // blectl has gone).
            try await sim.expectClean()
            let deviceCalls = try await sim.calls().filter { $0.interface == "org.bluez.Device1" }
            #expect(deviceCalls.map(\.member) == ["Connect", "Disconnect"])
            #expect(deviceCalls.allSatisfy { $0.outcome == "reply" && $0.path == "/org/bluez/hci0/dev_C0_FF_EE_00_00_01" })
        }
    }

    @Test("--format text: the tree as indented lines")
    func plainTreeText() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["connect", World.plain, "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            // The device serves Generic Access 0x1800 too, but bluetoothd claims it and
            // exports no object for it (as a real bluetoothd 5.66 does, make test-real).
            #expect(run.lines == [
                "address:       C0:FF:EE:00:00:05",
                "name:          blesim Plain",
                "address_type:  public",
                "adapter:       hci0",
                "was_connected: no",
                "services:      1",
                "  service 1801 (GATT)  primary",
                "    characteristic 2a05 (Service Changed)  [indicate]",
                "      descriptor 2902 (Client Characteristic Configuration)",
            ])
            try await sim.expectClean()
        }
    }

    @Test("lower-case address and --timeout=value are accepted; output upper-case")
    func lowerCaseAddress() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["connect", "c0:ff:ee:00:00:01", "--timeout=30"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == Self.probeTree)
        }
    }

    @Test("a device already connected is reported as such and left connected")
    func preconnectedLeftAlone() async throws {
        try await Sim.with(faults: ["preconnected": World.probe]) { sim in
            let run = await sim.blectl(["connect", World.probe])
            #expect(run.status == 0, "\(run)")
            let object = try #require(run.jsonObject())
            #expect(object["was_connected"] == true)
            #expect(object["services"] == Self.probeTree["services"])
            let state = try await sim.state()
            #expect(state.connections.map(\.address) == [World.probe])
            #expect(state.connections.first?.disconnecting == false)
            try #expect(await sim.calls().contains { $0.member == "Disconnect" } == false)
        }
    }
}
