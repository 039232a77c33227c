// Issue 3, the link: Connect that never answers, InProgress, le-connection-abort-by-local,
// a device removed or a link dropped while an operation is pending, a connection made by
// someone else, bluetoothd leaving, the D-Bus policy refusing us.

import Foundation
import SimulatorHarness
import Testing

@Suite struct ScenarioConnectionTests {
    /// 1. Connect never answers: at the deadline blectl sends Disconnect (which cancels the
    /// pending Connect in BlueZ) and exits 124 naming the connect.
    @Test func connectNeverAnsweredIsCancelledAtTheDeadline() async throws {
        try await Sim.with(faults: ["connect_never_answers": "true"]) { sim in
            let r = await sim.scenarioRun(["get-battery", World.probe, "--timeout", "5"])
            #expect(r.run.status == 124, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("timed_out", 124, operation: "connect", address: World.probe),
                                message: "timed out during connect on \(World.probe)")
            // Its deadline honoured, never early (how long the clean-up then takes is not a
            // machine-independent fact: the calls below show what it did).
            #expect(r.elapsed >= .milliseconds(4900), "elapsed \(r.elapsed)")
            let calls = try await sim.calls()
            // The Connect was failed by our Disconnect (br-connection-canceled), not left pending.
            #expect(calls.scenarioOutcomes("Connect") == [ScenarioWorld.failed])
            #expect(calls.scenarioOutcomes("Disconnect") == ["reply"])
            #expect(calls.filter { $0.member == "Disconnect" }.map(\.path) == [ScenarioWorld.probePath])
            #expect((calls.scenarioIndex("Connect") ?? .max) < (calls.scenarioIndex("Disconnect") ?? -1))
            try await sim.scenarioExpectClean()
            let state = try await sim.state()
            #expect(state.pendingConnects.isEmpty && state.connections.isEmpty)
        }
    }

    /// 5. Connect answers InProgress every time (another attempt holds the device for good):
    /// blectl waits for that attempt's link and tries Connect again, within --timeout, then
    /// ends with exit 5 busy as BlueZ last answered; it never sends Disconnect (which would
    /// cancel the other attempt).
    @Test func connectInProgressIsBusyAtTheTimeout() async throws {
        try await Sim.with(faults: ["connect_in_progress": "true"]) { sim in
            let r = await sim.scenarioRun(["get-battery", World.probe, "--timeout", "2"])
            #expect(r.run.status == 5, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("busy", 5, retryable: true, operation: "connect", address: World.probe,
                                                     dbusError: ScenarioWorld.inProgress),
                                message: "busy: connect on \(World.probe): In Progress")
            r.expectEndedBefore(.seconds(30))
            let calls = try await sim.calls()
            let outcomes = calls.scenarioOutcomes("Connect")
            #expect(outcomes.count > 1 && outcomes.allSatisfy { $0 == "error:\(ScenarioWorld.inProgress)" }, "\(outcomes)")
            #expect(calls.scenarioOutcomes("Disconnect") == [])
            try await sim.scenarioExpectClean()
        }
    }

    /// Two blectl processes connecting one device at once (found on the real bluetoothd):
    /// BlueZ answers the second Connect Failed "Operation already in progress" (EALREADY).
    /// The second waits for the first one's link and reads over it (it used to end with exit
    /// 5 busy at once); the first, whose Connect the simulator holds until then, reads the
    /// battery; nothing is left.
    @Test func twoClientsConnectingAtOnceBothSucceed() async throws {
        try await Sim.with(faults: ["connect_held": "1"]) { sim in
            let first = try await sim.launch(["get-battery", World.probe, "--timeout", "20"])
            try #expect(await sim.waitForState { $0.pendingConnects == [World.probe] }, "the first Connect never pending")
            let second = try await sim.launch(["get-battery", World.probe, "--timeout", "20"])
            let refused = try await eventually(within: .seconds(20)) {
                try await sim.calls().contains { $0.member == "Connect" && $0.outcome == "error:org.bluez.Error.Failed" }
            }
            #expect(refused, "the second Connect never met the first")
            try await sim.setFault("connect_held", "0")
            let expected: J = ["address": .string(World.probe), "percentage": 87, "source": "battery1"]
            for run in [first, second] {
                let result = try await run.finish(timeout: .seconds(30))
                #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
                #expect(J.parse(result.stdout.trimmingCharacters(in: .newlines)) == expected, "\(result.stdout)")
            }
            let connects = try await sim.calls().filter { $0.member == "Connect" }
            #expect(connects.first?.outcome == "reply", "\(connects)")
            try await sim.scenarioExpectClean()
        }
    }

    /// 6. le-connection-abort-by-local after a brief Connected=true: the second Connect
    /// succeeds and the battery is read.
    @Test func abortByLocalIsRetried() async throws {
        try await Sim.with(faults: ["connect_abort_once": "true"]) { sim in
            let r = await sim.scenarioRun(["get-battery", World.gattBattery, "--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.jsonObject() == ["address": .string(World.gattBattery), "percentage": 55, "source": "gatt"])
            #expect(r.run.stderr == "")
            // The Disconnect blectl sent on its way out completes after it has gone.
            try await sim.expectClean()
            let calls = try await sim.calls()
            #expect(calls.scenarioOutcomes("Connect") == [ScenarioWorld.failed, "reply"])
            #expect(calls.scenarioOutcomes("Disconnect") == ["reply"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 8. The device object is removed during service resolution: exit 4 long before the
    /// 15 s deadline (a behavioural bound: the removal fails the wait at once).
    @Test func deviceRemovedDuringResolutionFailsAtOnce() async throws {
        try await Sim.with(faults: ["remove_device_during_resolve": "true"]) { sim in
            let r = await sim.scenarioRun(["get-version", World.probe, "--timeout", "15"])
            #expect(r.run.status == 4, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("disconnected", 4, retryable: true, operation: "service_resolution", address: World.probe),
                                message: "disconnected during service resolution on \(World.probe)")
            r.expectEndedBefore(.seconds(15))
            let state = try await sim.state()
            #expect(!state.devices.contains(World.probe))
            try #expect(await sim.calls().scenarioOutcomes("Connect") == ["reply"])
            try await sim.scenarioExpectClean()
        }
    }

    /// Seen on a real bluetoothd 5.66 (make test-real): after a cancelled LE connection
    /// attempt, BlueZ removes the device object while the next Connect is pending and never
    /// answers that Connect. blectl finds the device again by scanning and connects.
    @Test func deviceRemovedWhileConnectPendingIsFoundAgain() async throws {
        try await Sim.with(faults: ["remove_device_during_connect_once": "true"]) { sim in
            // Make BlueZ know the device first, so the first Connect is sent without a scan.
            _ = await sim.scenarioRun(["scan", "--count", "10", "--timeout", "60"])
            let r = await sim.scenarioRun(["get-battery", World.probe, "--timeout", "15"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stdout.contains("\"percentage\":87"), "\(r.run.stdout)")
            let members = try await sim.calls().map(\.member)
            let connects = members.indices.filter { members[$0] == "Connect" }
            #expect(connects.count == 2, "\(members)")
            // A scan found the device again between the two Connects.
            if connects.count == 2 {
                #expect(members[connects[0]..<connects[1]].contains("StartDiscovery"), "\(members)")
            }
            try await sim.scenarioExpectClean()
        }
    }

    /// 18. The link drops while a read is pending; BlueZ fails the read ("Operation failed")
    /// just before it signals Connected=false: exit 4 disconnected at once, not 1 and not at
    /// the deadline.
    @Test func disconnectMidReadIsDisconnectedAtOnce() async throws {
        try await Sim.with(faults: ["disconnect_mid_read": "true"]) { sim in
            let r = await sim.scenarioRun(["get-battery", World.gattBattery, "--timeout", "15"])
            #expect(r.run.status == 4, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("disconnected", 4, retryable: true, operation: "read", address: World.gattBattery,
                                                     service: "180f", characteristic: "2a19"),
                                message: "disconnected during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on \(World.gattBattery)")
            r.expectEndedBefore(.seconds(15))
            try #expect(await sim.calls().scenarioOutcomes("ReadValue") == [ScenarioWorld.failed])
            try await sim.scenarioExpectClean()
        }
    }

    struct PendingOperation: Sendable, CustomTestStringConvertible {
        let method: String
        let arguments: [String]
        let address: String
        let operation: String
        let service: String
        let characteristic: String
        var testDescription: String { "\(method) pending" }
    }

    static let pendingOperations: [PendingOperation] = [
        PendingOperation(method: "ReadValue", arguments: ["get-battery", World.gattBattery], address: World.gattBattery,
                         operation: "read", service: "180f", characteristic: "2a19"),
        PendingOperation(method: "StartNotify", arguments: ["get-version", World.vendor] + World.vendorOptions, address: World.vendor,
                         operation: "notification_setup", service: World.vendorService, characteristic: World.vendorNotify),
        // The vendor request's write is pending: the error names the write, not the answer.
        PendingOperation(method: "WriteValue", arguments: ["get-version", World.vendor] + World.vendorOptions, address: World.vendor,
                         operation: "write", service: World.vendorService, characteristic: World.vendorWrite),
    ]

    /// "A disconnect fails every pending operation at once": BlueZ never answers the
    /// operation before the link drops (drop_link_on), so only Connected=false can end it;
    /// exit 4 well before the 15 s deadline, whichever operation was pending.
    @Test(arguments: pendingOperations)
    func linkDropFailsThePendingOperationAtOnce(_ pending: PendingOperation) async throws {
        try await Sim.with(faults: ["drop_link_on": pending.method]) { sim in
            let r = await sim.scenarioRun(pending.arguments + ["--timeout", "15"])
            #expect(r.run.status == 4, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("disconnected", 4, retryable: pending.operation != "write", operation: pending.operation, address: pending.address,
                                                     service: pending.service, characteristic: pending.characteristic),
                                mentions: ["disconnected during"])
            r.expectEndedBefore(.seconds(15))
            try #expect(await sim.calls().scenarioOutcomes(pending.method) == [ScenarioWorld.failed])
            try await sim.scenarioExpectClean()
        }
    }

    /// 12. A device someone else connected: used as it is, never connected nor disconnected
    /// by us, still connected afterwards.
    @Test func preconnectedDeviceIsLeftConnected() async throws {
        try await Sim.with(faults: ["preconnected": World.probe]) { sim in
            let r = await sim.scenarioRun(["get-battery", World.probe, "--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.jsonObject() == ["address": .string(World.probe), "percentage": 87, "source": "battery1"])
            #expect(r.run.stderr == "")
            let members = try await sim.calls().scenarioMembers
            #expect(!members.contains("Connect") && !members.contains("Disconnect"), "\(members)")
            // blectl has ended: nothing of it can still change the link.
            let state = try await sim.state()
            #expect(state.connections.map(\.address) == [World.probe])
            #expect(state.connections.first?.preconnected == true && state.connections.first?.disconnecting == false)
            try await sim.scenarioExpectClean()
        }
    }

    struct BluezExit: Sendable, CustomTestStringConvertible {
        let method: String
        let arguments: [String]
        let address: String?
        /// The stage named: the operation under way when bluetoothd left.
        let operation: String
        let service: String?
        let characteristic: String?
        /// "during …" in the message.
        let during: String
        var testDescription: String { "exit on \(method)" }
    }

    static let bluezExits: [BluezExit] = [
        BluezExit(method: "ReadValue", arguments: ["get-battery", World.gattBattery], address: World.gattBattery,
                  operation: "read", service: "180f", characteristic: "2a19",
                  during: "read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:04"),
        BluezExit(method: "Connect", arguments: ["get-battery", World.gattBattery], address: World.gattBattery,
                  operation: "connect", service: nil, characteristic: nil, during: "connect on C0:FF:EE:00:00:04"),
        BluezExit(method: "StartDiscovery", arguments: ["scan"], address: nil,
                  operation: "discovery", service: nil, characteristic: nil, during: "discovery"),
    ]

    /// 16. bluetoothd leaves the bus without answering: exit 69 "unavailable" at once, not
    /// at the 15 s deadline.
    @Test(arguments: bluezExits)
    func bluezLeavingIsUnavailable(_ exit: BluezExit) async throws {
        try await Sim.with(faults: ["bluez_exit_on": exit.method]) { sim in
            let r = await sim.scenarioRun(exit.arguments + ["--timeout", "15"])
            #expect(r.run.status == 69, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("unavailable", 69, operation: exit.operation, address: exit.address,
                                                     service: exit.service, characteristic: exit.characteristic),
                                message: "bluetoothd left the system bus during \(exit.during)")
            r.expectEndedBefore(.seconds(15))
            let state = try await sim.state()
            #expect(!state.bluezRunning)
            try #expect(await sim.calls().scenarioOutcomes(exit.method) == ["pending"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 17. The bus policy refuses org.bluez: exit 77 with a hint about the policy.
    @Test func accessDeniedIsPermissionDeniedWithAHint() async throws {
        try await Sim.with(faults: ["access_denied": "true"]) { sim in
            let r = await sim.scenarioRun(["get-battery", World.probe, "--timeout", "30"])
            #expect(r.run.status == 77, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("permission_denied", 77, operation: "bus", address: World.probe,
                                                     dbusError: "org.freedesktop.DBus.Error.AccessDenied"),
                                mentions: ["permission denied by the D-Bus policy", "/etc/dbus-1/system.d/bluetooth.conf", "'bluetooth' group"])
            let calls = try await sim.calls()
            #expect(calls.scenarioMembers == ["GetManagedObjects"])
            #expect(calls.scenarioOutcomes("GetManagedObjects") == ["error:org.freedesktop.DBus.Error.AccessDenied"])
            try await sim.scenarioExpectClean()
        }
    }
}
