// bluetoothd 5.83 and later says why a link went down: Device1.Disconnected(reason,
// message), just before Connected=false. A link-loss error then carries it
// (disconnect_reason, disconnect_message; the message ends with it); bluetoothd 5.82 sends
// no such signal and the error object is as it always was. Only org.bluez's owner counts.

import Foundation
import SimulatorHarness
import Testing

@Suite("link losses with bluetoothd's reason")
struct LinkLossReasonTests {
    /// `notify` on the GATT battery device until the simulator drops its link (DropLink:
    /// a supervision timeout).
    static func notifyUntilTheLinkDrops(_ sim: Sim) async throws -> Run {
        let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--timeout", "30"])
        #expect(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
        try await sim.dropLink(World.gattBattery)
        let result = try await process.finish()
        return Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    @Test("notify, link dropped (supervision timeout) on 5.87: Reason.Timeout in the error object and the message")
    func notifyLinkLoss() async throws {
        try await Sim.with(bluez: "5.87") { sim in
            let run = try await Self.notifyUntilTheLinkDrops(sim)
            #expect(run.status == 4, "\(run)")
            let error = try #require(run.jsonError())
            #expect(error.removing("message") == [
                "code": "disconnected", "exit_status": 4, "retryable": true, "operation": "notifications",
                "address": "C0:FF:EE:00:00:04", "service": "180f", "characteristic": "2a19", "dbus_error": .null,
                "disconnect_reason": "org.bluez.Reason.Timeout", "disconnect_message": "Connection timeout",
            ])
            #expect(topLevelKeys(String(run.stderr.dropFirst("{\"error\":".count)))
                    == World.errorKeys + ["disconnect_reason", "disconnect_message"], "\(run.stderr)")
            #expect(error["message"]?.string?.hasSuffix("(bluetoothd: org.bluez.Reason.Timeout: Connection timeout)") == true, "\(error)")
            try await sim.expectClean()
        }
    }

    @Test("the same on 5.82 (no Disconnected signal): the error object without a reason")
    func notifyLinkLossOlderBlueZ() async throws {
        try await Sim.with(bluez: "5.82") { sim in
            let run = try await Self.notifyUntilTheLinkDrops(sim)
            #expect(run.status == 4, "\(run)")
            #expect(topLevelKeys(String(run.stderr.dropFirst("{\"error\":".count))) == World.errorKeys, "\(run.stderr)")
            #expect(run.jsonError()?["message"]?.string?.contains("bluetoothd:") == false, "\(run)")
            try await sim.expectClean()
        }
    }

    @Test("read, the device ending the link mid-read on 5.87: Reason.Remote")
    func readDuringDrop() async throws {
        try await Sim.with(faults: ["disconnect_mid_read": "1"], bluez: "5.87") { sim in
            let run = await sim.blectl(["read", World.probe, "2a19"])
            #expect(run.status == 4, "\(run)")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "disconnected")
            #expect(error["operation"] == "read")
            #expect(error["disconnect_reason"] == "org.bluez.Reason.Remote", "\(error)")
            #expect(error["disconnect_message"] == "Connection terminated by remote user", "\(error)")
            try await sim.expectClean()
        }
    }
}
