// Services bluetoothd's own plugins claim, exported read-only from 5.80 on
// (ExportClaimedServices=read-only): a write into one is refused by bluetoothd with
// org.bluez.Error.NotAuthorized and reaches nothing. blectl says so (77 service_read_only),
// not that the device wants pairing. The simulated device (fault claimed_write_device) has a
// writable characteristic inside its Battery Service (0x180F).

import SimulatorHarness
import Testing

@Suite("writes into a service bluetoothd claims")
struct ClaimedServiceTests {
    static let device = "C0:FF:EE:00:00:0D"
    static let setting = "5a1e0201-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let faults = ["claimed_write_device": "true"]

    @Test("bluetoothd 5.82: 77 service_read_only naming the service and ExportClaimedServices; the value unchanged",
          arguments: [["01"], ["01", "--without-response"]])
    func refusedOnNewerBlueZ(_ options: [String]) async throws {
        try await Sim.with(faults: Self.faults, bluez: "5.82") { sim in
            let run = await sim.blectl(["write", Self.device, Self.setting] + options)
            #expect(run.status == 77, "\(run)")
            scenarioExpectError(run, scenarioError("service_read_only", 77, operation: "write", address: Self.device, service: "180f",
                                                   characteristic: Self.setting, dbusError: "org.bluez.Error.NotAuthorized"),
                                mentions: ["read-only", "180f (Battery)", "ExportClaimedServices", "main.conf"])
            #expect(run.jsonError()?["message"]?.string?.contains("blectl pair") == false, "\(run)")
            try #expect(await sim.calls().scenarioOutcomes("WriteValue") == ["error:org.bluez.Error.NotAuthorized"])
            let back = await sim.blectl(["read", Self.device, Self.setting])
            #expect(back.jsonObject()?["value"] == "14", "\(back)")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("bluetoothd 5.82, write --file: AcquireWrite refused the same way, no fallback to WriteValue")
    func streamRefused() async throws {
        try await Sim.with(faults: Self.faults, bluez: "5.82") { sim in
            let path = try WriteFileTests.file([1, 2, 3])
            let run = await sim.blectl(["write", Self.device, Self.setting, "--without-response", "--file", path])
            #expect(run.status == 77, "\(run)")
            #expect(run.jsonError()?["code"] == "service_read_only", "\(run)")
            let members = try await sim.calls().filter { $0.interface == "org.bluez.GattCharacteristic1" }.map(\.member)
            #expect(members == ["AcquireWrite"], "\(members)")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("bluetoothd 5.66: the same write goes through and reads back")
    func writableOnOlderBlueZ() async throws {
        try await Sim.with(faults: Self.faults) { sim in
            let run = await sim.blectl(["write", Self.device, Self.setting, "05"])
            #expect(run.status == 0, "\(run)")
            let back = await sim.blectl(["read", Self.device, Self.setting])
            #expect(back.jsonObject()?["value"] == "05", "\(back)")
            try await sim.scenarioExpectClean()
        }
    }

    @Test("a service no plugin claims stays writable on 5.82")
    func unclaimedWritable() async throws {
        try await Sim.with(faults: World.toolboxFaults, bluez: "5.82") { sim in
            let run = await sim.blectl(["write", World.toolbox, World.toolboxText, "6869"])
            #expect(run.status == 0, "\(run)")
            try await sim.scenarioExpectClean()
        }
    }
}
