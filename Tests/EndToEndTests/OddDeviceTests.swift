// Issue 11, the field's odd devices: a dual-mode device BlueZ last saw over BR/EDR (13).

import Foundation
import SimulatorHarness
import Testing

enum OddWorld {
    static let dual = "C0:FF:EE:00:00:09"
    static let dualPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_09"
    static let dualVersion: J = ["address": .string(dual), "source": "device_information", "firmware_revision": "3.1.0",
                                 "hardware_revision": .null, "software_revision": .null,
                                 "manufacturer_name": "Blesim Wearables", "model_number": "Dual-1"]
    static let le = SimState.ConnectAttempt(address: dual, bearer: "le")
    static let bredr = SimState.ConnectAttempt(address: dual, bearer: "bredr")
}

extension [SimCall] {
    /// Whether an LE-only discovery (SetDiscoveryFilter Transport "le", then StartDiscovery)
    /// was started between the calls at `from` and `to` (indices, exclusive).
    func oddLEDiscovery(between from: Int, and to: Int) -> Bool {
        guard from + 1 < to else { return false }
        let slice = self[(from + 1)..<to]
        guard let filter = slice.firstIndex(where: { $0.member == "SetDiscoveryFilter" && $0.filter?["Transport"] == .string("le") })
        else { return false }
        return slice[filter...].contains { $0.member == "StartDiscovery" && $0.outcome == "reply" }
    }

    func oddIndices(_ member: String) -> [Int] { indices.filter { self[$0].member == member } }
}

@Suite struct DualModeDeviceTests {
    /// A dual-mode device in the tree from a BR/EDR inquiry (it has a Class of Device):
    /// Device1.Connect at once would go over BR/EDR. blectl first hears it in an LE-only
    /// discovery, so BlueZ takes LE: one Connect, over LE, and the firmware read.
    @Test func deviceSeenOverBREDRIsHeardOverLEBeforeConnect() async throws {
        try await Sim.with(faults: ["dual_mode_device": "inquiry", "bredr_seen_ago_s": "30"]) { sim in
            let r = await sim.blectl(["get-version", OddWorld.dual, "--timeout", "30"])
            #expect(r.status == 0, "\(r)")
            #expect(r.jsonObject() == OddWorld.dualVersion, "\(r.stdout)")
            #expect(r.stderr == "")
            #expect(try await sim.state().connects == [OddWorld.le])
            let calls = try await sim.calls()
            let connect = try #require(calls.oddIndices("Connect").first)
            #expect(calls.oddIndices("Connect").count == 1)
            #expect(calls.oddLEDiscovery(between: -1, and: connect), "\(calls.scenarioMembers)")
            try await sim.scenarioExpectClean()
        }
    }

    /// Nothing on D-Bus says the device does BR/EDR (no Class), so Connect goes straight to
    /// BR/EDR and fails NotAvailable "br-connection-profile-unavailable" with the ACL up.
    /// blectl disconnects that link, hears the device in an LE-only discovery (in a later
    /// second than the failure: BlueZ compares whole seconds) and connects again, over LE.
    @Test func bredrFailureIsRecoveredOverLE() async throws {
        try await Sim.with(faults: ["dual_mode_device": "no-class"]) { sim in
            let r = await sim.blectl(["get-version", OddWorld.dual, "--timeout", "30"])
            #expect(r.status == 0, "\(r)")
            #expect(r.jsonObject() == OddWorld.dualVersion, "\(r.stdout)")
            #expect(r.stderr == "")
            #expect(try await sim.state().connects == [OddWorld.bredr, OddWorld.le])
            let calls = try await sim.calls()
            let connects = calls.oddIndices("Connect")
            try #require(connects.count == 2, "\(calls.scenarioMembers)")
            #expect(calls[connects[0]].outcome == "error:org.bluez.Error.NotAvailable")
            #expect(calls[connects[1]].outcome == "reply")
            // The BR/EDR link was disconnected before the LE-only discovery and the retry.
            let disconnect = try #require(calls.oddIndices("Disconnect").first { $0 > connects[0] })
            #expect(disconnect < connects[1])
            #expect(calls[disconnect].path == OddWorld.dualPath)
            #expect(calls.oddLEDiscovery(between: disconnect, and: connects[1]), "\(calls.scenarioMembers)")
            try await sim.scenarioExpectClean()
        }
    }

    /// A device whose LE advertisements say it does BR/EDR too (flags 0x1a): BlueZ 5.66
    /// counts each LE sighting as a BR/EDR one and, on a tie, takes BR/EDR; no LE-only
    /// discovery helps. blectl tries once more, then fails 1 with BlueZ's error kept and a
    /// message that says what happened, leaving no link up.
    @Test func deviceAdvertisingBREDRFailsWithTheReason() async throws {
        try await Sim.with(faults: ["dual_mode_device": "bredr-flag"]) { sim in
            let r = await sim.scenarioRun(["get-version", OddWorld.dual, "--timeout", "30"])
            #expect(r.run.status == 1, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("bluez_failed", 1, operation: "connect", address: OddWorld.dual,
                                                     dbusError: "org.bluez.Error.NotAvailable"),
                                mentions: ["connect on \(OddWorld.dual) failed: org.bluez.Error.NotAvailable: br-connection-profile-unavailable",
                                           "over BR/EDR, not LE", "PreferredBearer"])
            r.expectEndedBefore(.seconds(30))
            #expect(try await sim.state().connects == [OddWorld.bredr, OddWorld.bredr])
            let calls = try await sim.calls()
            // Each BR/EDR link blectl brought up, it disconnected.
            #expect(calls.scenarioOutcomes("Disconnect") == ["reply", "reply"], "\(calls.scenarioMembers)")
            try await sim.scenarioExpectClean()
        }
    }
}

/// Issue 11 item 14: the peripheral changes its GATT database while an operation is pending
/// (Service Changed): BlueZ never answers that call, removes the service's objects and adds
/// them again at new handles (new object paths). The kind: every operation whose object leaves.
@Suite struct ServiceChangedTests {
    static let dis180APath = "\(ScenarioWorld.probePath)/service0014"

    /// get-version: the firmware read is pending when 0x180A leaves; blectl finds 0x2A26 at its
    /// new path and reads again, well before its timeout; the old read was never answered.
    @Test func readPendingWhenItsServiceLeavesIsReadAgain() async throws {
        try await Sim.with(faults: ["service_changed_on": "ReadValue"]) { sim in
            let r = await sim.scenarioRun(["get-version", World.probe, "--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.jsonObject() == ["address": .string(World.probe), "source": "device_information", "firmware_revision": "1.4.2",
                                           "hardware_revision": .null, "software_revision": .null,
                                           "manufacturer_name": "Blesim Labs", "model_number": "Probe-1"], "\(r.run.stdout)")
            #expect(r.run.stderr == "")
            let reads = try await sim.calls().filter { $0.member == "ReadValue" }
            // The first read, on the old path, was never answered; the next ones went to the new paths.
            try #require(reads.count >= 2, "\(reads)")
            #expect(reads[0].outcome == "pending")
            #expect(reads[0].path.hasPrefix(Self.dis180APath + "/"))
            #expect(reads.dropFirst().allSatisfy { $0.outcome == "reply" && !$0.path.hasPrefix(Self.dis180APath + "/") }, "\(reads)")
            r.expectEndedBefore(.seconds(20))
            try await sim.scenarioExpectClean()
        }
    }

    /// The service changes as the services resolve (its objects removed just before
    /// ServicesResolved, exported again 100 ms later at new paths): the toolbox commands'
    /// lookup waits for the tree to settle instead of answering from the tree as it was,
    /// and the call goes to the new object. Before, `read` and `request` ended 3 "no
    /// characteristic" (found by this session's breaker, 2 runs in 8 with a timed
    /// `simctl service-changed`). For each command the tree changes once.
    @Test(arguments: [
        (["read", World.toolbox, World.toolboxText], World.toolboxService, "ReadValue"),
        (["write", World.toolbox, World.toolboxText, "again", "--text"], World.toolboxService, "WriteValue"),
        (["request", World.probe, "01", "--write", World.vendorWrite, "--notify", World.vendorNotify, "--response-prefix", "81"],
         World.vendorService, "WriteValue"),
    ])
    func toolboxLookupWaitsForAServiceThatChangesAsServicesResolve(arguments: [String], service: String, member: String) async throws {
        try await Sim.with(faults: World.toolboxFaults.merging(["service_changed_at_resolution": service]) { $1 }) { sim in
            let r = await sim.scenarioRun(arguments + ["--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            let calls = try await sim.calls().filter { $0.member == member }
            // One call, answered, at the object exported again (from handle 0x0100 on: sim/README.md).
            #expect(calls.map(\.outcome) == ["reply"], "\(calls)")
            #expect(calls.allSatisfy { $0.path.contains("/service01") }, "\(calls)")
            try #expect(await sim.state().faults["service_changed_at_resolution"] == nil, "the fault did not fire")
            r.expectEndedBefore(.seconds(20))
            try await sim.scenarioExpectClean()
        }
    }

    /// `request` waiting for its response when the vendor service changes (the command
    /// written and answered): the subscription went with the object, so the response can no
    /// longer come. Exit 1 outcome_unknown naming the wait for the response, at once (before,
    /// the whole --timeout, 124; found by this session's second breaker trial), and no
    /// StopNotify to the object that left.
    @Test func requestWaitingForItsResponseWhenTheServiceChangesEndsOutcomeUnknown() async throws {
        try await Sim.with(faults: ["no_notification": "1"]) { sim in
            let arguments = ["request", World.vendor, "01", "--write", World.vendorWrite, "--notify", World.vendorNotify,
                             "--response-prefix", "81", "--timeout", "60"]
            let process = try await sim.launch(arguments)
            let deadline = ContinuousClock.now + .seconds(20)
            while try await !sim.calls().contains(where: { $0.member == "WriteValue" && $0.outcome == "reply" }),
                  ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            try #require(try await sim.calls().contains { $0.member == "WriteValue" && $0.outcome == "reply" }, "never written")
            let simulator = sim.simulator
            try await offThread { try simulator.serviceChanged(address: World.vendor, service: World.vendorService) }
            // The hang detector, far below the 60 s timeout the old behaviour waited for.
            let result = try await process.finish(timeout: .seconds(20))
            let run = Run(arguments: arguments, result: result)
            #expect(!result.timedOut, "still waiting after the service changed: \(run)")
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout == "")
            let error = run.jsonError()
            #expect(error?["code"] == "outcome_unknown", "\(run.stderr)")
            #expect(error?["operation"] == "response")
            #expect(error?["characteristic"] == .string(World.vendorNotify))
            try #expect(await sim.calls().filter { $0.member == "StopNotify" }.isEmpty)
            try await sim.scenarioExpectClean()
        }
    }

    /// `read`: the same for the toolbox's text characteristic, and its value printed.
    @Test func readCommandFollowsItsCharacteristic() async throws {
        try await Sim.with(faults: World.toolboxFaults.merging(["service_changed_on": "ReadValue"]) { $1 }) { sim in
            let r = await sim.scenarioRun(["read", World.toolbox, World.toolboxText, "--timeout", "30"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.jsonObject()?["text"] == "hello, toolbox", "\(r.run.stdout)")
            let reads = try await sim.calls().filter { $0.member == "ReadValue" }
            #expect(reads.map(\.outcome) == ["pending", "reply"], "\(reads)")
            #expect(reads.count == 2 && reads[0].path != reads[1].path)
            r.expectEndedBefore(.seconds(20))
            try await sim.scenarioExpectClean()
        }
    }

    /// `write` (with response) pending when its service leaves: whether the device took it is
    /// unknown, so it is not sent again: exit 1 outcome_unknown naming the write, at once.
    @Test func writePendingWhenItsServiceLeavesIsNotResent() async throws {
        try await Sim.with(faults: World.toolboxFaults.merging(["service_changed_on": "WriteValue"]) { $1 }) { sim in
            let r = await sim.scenarioRun(["write", World.toolbox, World.toolboxText, "again", "--text", "--timeout", "30"])
            #expect(r.run.status == 1, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("outcome_unknown", 1, operation: "write", address: World.toolbox,
                                                     service: World.toolboxService, characteristic: World.toolboxText),
                                mentions: ["left while the write was pending", "not written again"])
            let writes = try await sim.calls().filter { $0.member == "WriteValue" }
            #expect(writes.map(\.outcome) == ["pending"], "\(writes)")
            r.expectEndedBefore(.seconds(20))
            try await sim.scenarioExpectClean()
        }
    }

    /// get-version through the vendor protocol: StartNotify on the response characteristic is
    /// pending when the vendor service leaves; StartNotify goes again to the new object, and
    /// the request, whose old object was gone before it was sent, to the new command
    /// characteristic (nothing was sent, so nothing is unknown): the firmware is printed.
    @Test func startNotifyPendingWhenItsServiceLeavesIsSentAgain() async throws {
        try await Sim.with(faults: ["service_changed_on": "StartNotify"]) { sim in
            let r = await sim.scenarioRun(["get-version", World.probe, "--timeout", "30"] + World.vendorOptions)
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.jsonObject() == ["address": .string(World.probe), "source": "vendor", "firmware_revision": "1.4.2",
                                           "hardware_revision": .null, "software_revision": .null,
                                           "manufacturer_name": .null, "model_number": .null], "\(r.run.stdout)")
            let calls = try await sim.calls()
            let starts = calls.filter { $0.member == "StartNotify" }
            #expect(starts.map(\.outcome) == ["pending", "reply"], "\(starts)")
            #expect(calls.filter { $0.member == "WriteValue" }.map(\.outcome) == ["reply"])
            #expect(calls.filter { $0.member == "StopNotify" }.map(\.path) == [starts.last?.path], "\(calls.scenarioMembers)")
            r.expectEndedBefore(.seconds(20))
            try await sim.scenarioExpectClean()
        }
    }

    /// `notify`'s AcquireNotify is pending when its service leaves (on the vendor response
    /// characteristic and on Battery Level; with and without --reconnect): it fails at once and
    /// goes again to the characteristic found again by its UUIDs; the values that come after
    /// are printed from seq 1, and the socket closed at the end (nothing to stop).
    @Test(arguments: [(World.probe, World.vendorNotify, false), (World.probe, World.vendorNotify, true),
                      (World.gattBattery, "2a19", false)])
    func notifyStartPendingWhenItsServiceLeavesIsSentAgain(address: String, characteristic: String, reconnect: Bool) async throws {
        let faults = ["service_changed_on": "AcquireNotify", "no_status_notification": "1",
                      "notify_burst": "2", "notify_burst_char": characteristic]
        try await Sim.with(faults: faults) { sim in
            let r = await sim.scenarioRun(["notify", address, characteristic, "--count", "2", "--timeout", "30"]
                                          + (reconnect ? ["--reconnect"] : []))
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            let records = r.run.jsonLines()
            #expect(records.map { $0["value"]?.string ?? "" } == ["00000001", "00000002"], "\(r.run.stdout)")
            #expect(records.map { $0["seq"]?.int ?? 0 } == [1, 2])
            #expect(records.map { $0["connection"]?.int ?? 0 } == [1, 1])
            let calls = try await sim.calls()
            let starts = calls.filter { $0.member == "AcquireNotify" }
            #expect(starts.map(\.outcome) == ["pending", "reply"], "\(starts)")
            #expect(starts.count == 2 && starts[0].path != starts[1].path, "\(starts)")
            #expect(calls.notifyCalls == ["AcquireNotify pending", "AcquireNotify reply"], "\(calls.scenarioMembers)")
            r.expectEndedBefore(.seconds(20))
            try await sim.scenarioExpectClean()
        }
    }

    /// `notify` mid-stream: the vendor service changes (its objects removed, the session with
    /// them, and added again at new paths) after 3 values: blectl subscribes again on the new
    /// object and the next 3 values follow on the same stream (seq 4..6, link 1), none lost or
    /// repeated; the new object's socket closed at the end. With and without --reconnect.
    @Test(arguments: [false, true])
    func notifySubscriptionFollowsItsCharacteristicMidStream(reconnect: Bool) async throws {
        try await Sim.with(faults: ["no_status_notification": "1"]) { sim in
            let process = try await sim.launch(["notify", World.probe, World.vendorNotify, "--count", "6", "--timeout", "30"]
                                               + (reconnect ? ["--reconnect"] : []))
            try #require(try await sim.waitForState(timeout: .seconds(20)) { !$0.notifySessions.isEmpty }, "notifications never started")
            let first = try #require(try await sim.state().notifySessions.first?.path)
            try await sim.burst(World.probe, World.vendorNotify, count: 3)
            #expect(await process.stdoutContains("\"seq\":3,"), "\(process.currentStderr)")
            let simulator = sim.simulator
            try await offThread { try simulator.serviceChanged(address: World.probe, service: World.vendorService) }
            // The service is added again at new handles, from 0x0100 on (sim/README.md).
            let again = try await sim.waitForState(timeout: .seconds(10)) { $0.notifySessions.contains { $0.path.contains("/service01") } }
            try #require(again, "not subscribed again: \(process.currentStderr)")
            try await sim.burst(World.probe, World.vendorNotify, count: 3)
            let result = try await process.finish()
            let run = Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let records = run.jsonLines()
            #expect(records.map { $0["value"]?.string ?? "" } == ["00000001", "00000002", "00000003", "00000001", "00000002", "00000003"],
                    "\(run.stdout)")
            #expect(records.map { $0["seq"]?.int ?? 0 } == Array(1...6))
            #expect(records.map { $0["connection"]?.int ?? 0 } == Array(repeating: 1, count: 6))
            let calls = try await sim.calls()
            let starts = calls.filter { $0.member == "AcquireNotify" }
            #expect(starts.map(\.outcome) == ["reply", "reply"], "\(starts)")
            #expect(starts.first?.path == first && starts.last?.path != first, "\(starts)")
            #expect(calls.notifyCalls == ["AcquireNotify reply", "AcquireNotify reply"], "\(calls.scenarioMembers)")
            #expect(calls.filter { $0.member == "Connect" }.count == 1)
            try await sim.scenarioExpectClean()
        }
    }

    /// `notify` mid-stream, the device dropping the vendor service for good: blectl does not
    /// go deaf but ends with 3 not_supported naming the characteristic, after the values
    /// received; nothing is left (the old session went with its object).
    @Test func notifyCharacteristicNotFoundAgainEndsNotSupported() async throws {
        try await Sim.with(faults: ["no_status_notification": "1", "service_changed_removes": "1"]) { sim in
            let process = try await sim.launch(["notify", World.probe, World.vendorNotify, "--timeout", "30"])
            try #require(try await sim.waitForState(timeout: .seconds(20)) { !$0.notifySessions.isEmpty }, "notifications never started")
            try await sim.burst(World.probe, World.vendorNotify, count: 2)
            #expect(await process.stdoutContains("\"seq\":2,"), "\(process.currentStderr)")
            let simulator = sim.simulator
            try await offThread { try simulator.serviceChanged(address: World.probe, service: World.vendorService) }
            let result = try await process.finish()
            let run = Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 3, "\(run)")
            #expect(run.jsonLines().map { $0["value"]?.string ?? "" } == ["00000001", "00000002"], "\(run.stdout)")
            scenarioExpectError(run, scenarioError("not_supported", 3, operation: "notification_setup", address: World.probe,
                                                   service: World.vendorService, characteristic: World.vendorNotify),
                                mentions: ["characteristic \(World.vendorNotify) in service \(World.vendorService)", "not found again"])
            let calls = try await sim.calls()
            #expect(calls.notifyCalls == ["AcquireNotify reply"], "\(calls.scenarioMembers)")
            #expect(calls.last?.member == "Disconnect", "\(calls.scenarioMembers)")
            try await sim.scenarioExpectClean()
        }
    }
}
