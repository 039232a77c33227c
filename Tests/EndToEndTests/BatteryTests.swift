// `blectl get-battery` (alias `battery`): Battery1, GATT 0x2A19, or the vendor protocol.

import SimulatorHarness
import Testing

@Suite("blectl get-battery")
struct BatteryTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var command: String
        var address: String
        var percentage: Int
        var source: String
        var vendor = false
        var testDescription: String { "\(command) \(address)\(vendor ? " (vendor)" : "")" }
    }

    @Test("each device's level and source", arguments: [
        // blesim Probe has both; Battery1 comes with ServicesResolved, as on a real
        // bluetoothd: it is the first source.
        Case(command: "get-battery", address: World.probe, percentage: 87, source: "battery1"),
        Case(command: "battery", address: World.battery1, percentage: 42, source: "battery1"),
        Case(command: "get-battery", address: World.gattBattery, percentage: 55, source: "gatt"),
        Case(command: "get-battery", address: World.vendor, percentage: 64, source: "vendor", vendor: true),
        Case(command: "battery", address: World.probe, percentage: 87, source: "vendor", vendor: true),
    ])
    func level(_ c: Case) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl([c.command, c.address] + (c.vendor ? World.vendorOptions : []))
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let object = try #require(run.jsonObject())
            #expect(object == ["address": .string(c.address), "percentage": .int(c.percentage), "source": .string(c.source)])
            #expect(topLevelKeys(run.stdout) == ["address", "percentage", "source"])
            try await sim.expectClean()
        }
    }

    @Test("--format text")
    func text() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["get-battery", World.gattBattery, "--format", "text", "--adapter=hci0"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.stdout == "C0:FF:EE:00:00:04  55%  (gatt)\n")
        }
    }

    @Test("no battery at all: exit 3, not_supported, nothing on stdout")
    func noBattery() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["get-battery", World.plain])
            #expect(run.status == 3, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "not_supported")
            #expect(error["exit_status"] == 3)
            #expect(error["address"] == "C0:FF:EE:00:00:05")
            #expect(error["dbus_error"] == .null)
            #expect(error["operation"] == "battery")
            #expect(error["service"] == "180f")
            #expect(error["message"] == "not supported by the device: C0:FF:EE:00:00:05 has no org.bluez.Battery1 and no GATT service 180f (Battery)")
            try await sim.expectClean()
        }
    }

    @Test("back to back with BlueZ's default 2 s disconnect timer: both succeed")
    func backToBack() async throws {
        try await Sim.with(fastDisconnect: false) { sim in
            try #expect(await sim.state().faults["disconnect_delay_ms"] == nil)
            for round in 1...2 {
                let run = await sim.blectl(["get-battery", World.probe])
                #expect(run.status == 0, "round \(round): \(run)")
                #expect(run.stderr == "", "round \(round)")
                let object = try #require(run.jsonObject(), "round \(round)")
                #expect(object["percentage"] == 87, "round \(round)")
                #expect(object["address"] == "C0:FF:EE:00:00:01", "round \(round)")
            }
            // The second found the first's link up (BlueZ still disconnecting it) and read over
            // it, or, its timer run, connected anew: which depends on the machine's speed.
            // Either way each command disconnects only a link it made.
            try await sim.expectClean()
            let calls = try await sim.calls()
            let connects = calls.filter { $0.member == "Connect" }
            #expect([["reply"], ["reply", "reply"]].contains(connects.map(\.outcome)), "\(connects)")
            #expect(calls.filter { $0.member == "Disconnect" }.count == connects.count)
        }
    }
}
