// Issue 3, GATT: objects trailing ServicesResolved, where the battery level comes from, and
// the vendor request/response protocol under reordered and refused operations.

import Foundation
import SimulatorHarness
import Testing

@Suite struct ScenarioGATTTests {
    /// 7. ServicesResolved comes 200 ms before the GATT objects: the Device Information
    /// Service is read whole once the tree is complete, not as a half-exported service.
    @Test func servicesResolvedBeforeGATTObjects() async throws {
        try await Sim.with(faults: ["services_resolved_before_gatt_ms": "200"]) { sim in
            let r = await sim.scenarioRun(["get-version", World.probe, "--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(r.run.jsonObject() == [
                "address": .string(World.probe), "source": "device_information", "firmware_revision": "1.4.2",
                "hardware_revision": .null, "software_revision": .null, "manufacturer_name": "Blesim Labs",
                "model_number": "Probe-1",
            ])
            try #expect(await sim.calls().scenarioOutcomes("ReadValue") == ["reply", "reply", "reply"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 9. Battery1 only: 42 from battery1.
    @Test func batteryFromBattery1Only() async throws {
        try await Sim.with { sim in
            let r = await sim.scenarioRun(["get-battery", World.battery1, "--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(r.run.jsonObject() == ["address": .string(World.battery1), "percentage": 42, "source": "battery1"])
            try #expect(await sim.calls().scenarioOutcomes("ReadValue") == [])
            try await sim.scenarioExpectClean()
        }
    }

    /// 9. GATT Battery Service only: 55 from gatt.
    @Test func batteryFromGATTOnly() async throws {
        try await Sim.with { sim in
            let r = await sim.scenarioRun(["get-battery", World.gattBattery, "--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(r.run.jsonObject() == ["address": .string(World.gattBattery), "percentage": 55, "source": "gatt"])
            try #expect(await sim.calls().scenarioOutcomes("ReadValue") == ["reply"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 9. Neither: exit 3 saying what is missing.
    @Test func noBatteryIsNotSupported() async throws {
        try await Sim.with { sim in
            let r = await sim.scenarioRun(["get-battery", World.plain, "--timeout", "30"])
            #expect(r.run.status == 3, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("not_supported", 3, operation: "battery", address: World.plain, service: "180f"),
                                message: "not supported by the device: \(World.plain) has no org.bluez.Battery1 and no GATT service 180f (Battery)")
            r.expectEndedBefore(.seconds(30))
            try await sim.scenarioExpectClean()
        }
    }

    /// 13. The answer notification comes before the WriteValue reply: still matched.
    @Test func answerBeforeTheWriteReplyIsMatched() async throws {
        try await Sim.with(faults: ["notify_before_write_reply": "true"]) { sim in
            let r = await sim.scenarioRun(["get-version", World.probe, "--timeout", "30"] + World.vendorOptions)
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(r.run.jsonObject() == [
                "address": .string(World.probe), "source": "vendor", "firmware_revision": "1.4.2",
                "hardware_revision": .null, "software_revision": .null, "manufacturer_name": .null, "model_number": .null,
            ])
            let calls = try await sim.calls()
            #expect(calls.scenarioOutcomes("WriteValue") == ["reply"])
            #expect(calls.scenarioOutcomes("StopNotify") == ["reply"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 13. A response characteristic that is also readable (response_readable): the vendor
    /// protocol still takes its answer from the notification. (blectl never reads that
    /// characteristic, so the Value change BlueZ signals after a read is checked at library
    /// level: Session.expectReadMirror.)
    @Test func vendorProtocolWorksWithAReadableResponseCharacteristic() async throws {
        try await Sim.with(faults: ["response_readable": "true"]) { sim in
            let r = await sim.scenarioRun(["get-battery", World.vendor, "--timeout", "30"] + World.vendorOptions)
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(r.run.jsonObject() == ["address": .string(World.vendor), "percentage": 64, "source": "vendor"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 14. The first WriteValue answers InProgress: retried, the command succeeds.
    @Test func writeInProgressOnceIsRetried() async throws {
        try await Sim.with(faults: ["write_in_progress_once": "true"]) { sim in
            let r = await sim.scenarioRun(["get-version", World.vendor, "--timeout", "30"] + World.vendorOptions)
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(r.run.jsonObject() == [
                "address": .string(World.vendor), "source": "vendor", "firmware_revision": "2.0.7",
                "hardware_revision": .null, "software_revision": .null, "manufacturer_name": .null, "model_number": .null,
            ])
            try #expect(await sim.calls().scenarioOutcomes("WriteValue") == ["error:\(ScenarioWorld.inProgress)", "reply"])
            try await sim.scenarioExpectClean()
        }
    }
}
