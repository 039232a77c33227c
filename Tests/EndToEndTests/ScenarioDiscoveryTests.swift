// Issue 3, discovery: Ctrl-C while StartDiscovery is pending, InProgress answers, the adapter
// powering off mid-scan, cached and foreign devices, odd names.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct ScenarioDiscoveryTests {
    /// 2. SIGINT while the StartDiscovery reply is pending: blectl waits for the reply, then
    /// StopDiscovery (BlueZ answers StopDiscovery InProgress before that reply, so an answer
    /// "reply" proves the order), leaves no session, and dies by SIGINT (130). The simulator
    /// holds the reply until blectl has taken the signal, then releases it (blectl waits up
    /// to 2 s for it: one control call).
    @Test func interruptWhileStartDiscoveryIsPendingStopsAfterTheReply() async throws {
        try await Sim.with(faults: ["start_discovery_held": "1"]) { sim in
            let process = try await sim.launch(["scan", "--timeout", "30"])
            try #expect(await sim.waitForState { $0.pendingStartDiscovery.count == 1 }, "StartDiscovery was not seen pending")
            #expect(await process.signalAndWaitUntilTaken(SIGINT), "SIGINT never taken")
            try await sim.setFault("start_discovery_held", "0")
            let result = try await process.finish(timeout: .seconds(10))
            #expect(result.status == 130, "stdout: \(result.stdout) stderr: \(result.stderr)")
            #expect(result.stdout == "")
            #expect(result.stderr == "")
            let calls = try await sim.calls()
            #expect(calls.scenarioMembers == ["GetManagedObjects", "SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
            #expect(calls.scenarioOutcomes("StartDiscovery") == ["reply"])
            #expect(calls.scenarioOutcomes("StopDiscovery") == ["reply"])
            try await sim.scenarioExpectClean()
            try #expect(await sim.state().discovering == false)
        }
    }

    /// The same kind of clean-up for notifications: SIGINT while StartNotify is pending; the
    /// StopNotify follows its reply (held by the simulator until blectl has taken the
    /// signal), then the Disconnect of the link we made.
    @Test func interruptWhileStartNotifyIsPendingStopsAfterTheReply() async throws {
        try await Sim.with(faults: ["start_notify_held": "1"]) { sim in
            let process = try await sim.launch(["get-version", World.vendor, "--timeout", "30"] + World.vendorOptions)
            try #expect(await sim.waitForState { $0.pendingGATT.map(\.op) == ["StartNotify"] }, "StartNotify was not seen pending")
            #expect(await process.signalAndWaitUntilTaken(SIGINT), "SIGINT never taken")
            try await sim.setFault("start_notify_held", "0")
            let result = try await process.finish(timeout: .seconds(10))
            #expect(result.status == 130, "stdout: \(result.stdout) stderr: \(result.stderr)")
            #expect(result.stdout == "")
            #expect(result.stderr == "")
            let calls = try await sim.calls()
            #expect(calls.scenarioOutcomes("StartNotify") == ["reply"])
            #expect(calls.scenarioOutcomes("StopNotify") == ["reply"])
            #expect(calls.scenarioOutcomes("WriteValue") == [])
            // Interrupted, blectl sends Disconnect and leaves without waiting for BlueZ's
            // disconnect timer; BlueZ completes it (checked below: nothing left).
            #expect(calls.scenarioOutcomes("Disconnect").count == 1)
            #expect((calls.scenarioIndex("StopNotify") ?? .max) < (calls.scenarioIndex("Disconnect") ?? -1))
            try await sim.scenarioExpectClean()
        }
    }

    /// The advertisement and its scan response (with the service UUIDs) can be reported
    /// separately (Linux merges them only when the scan response comes right after its
    /// advertisement), so a device first appears without UUIDs. A `--service` scan must
    /// still report it once the UUIDs arrive.
    @Test func serviceUUIDsArrivingWithTheScanResponseStillMatch() async throws {
        try await Sim.with(faults: ["uuids_in_scan_response": "true"]) { sim in
            // Ends when both have been reported (--count 2), not at a time a loaded machine may
            // not keep: the scan responses can take longer than a second to come.
            let r = await sim.scenarioRun(["scan", "--timeout", "30", "--service", "180f", "--count", "2"])
            #expect(r.run.status == 0, "\(r.run)")
            let lines = r.run.stdout.split(separator: "\n").map(String.init)
            let addresses = lines.compactMap { line -> String? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return nil }
                #expect((object["uuids"] as? [String])?.contains("180f") == true, "\(line)")
                return object["address"] as? String
            }
            #expect(addresses.sorted() == [World.probe, World.gattBattery], "\(r.run.stdout)")
            try await sim.scenarioExpectClean()
        }
    }

    /// Seen on a real bluetoothd 5.66 (make test-real): a connection whose GATT discovery
    /// ends with the link leaves Device1.UUIDs empty, and bluetoothd ignores the advertised
    /// UUIDs from then on (src/device.c marks the services resolved even when discovery
    /// failed). blectl reports Device1.UUIDs as BlueZ has them: a plain scan prints the
    /// device with `uuids: []`, and `--service`, checked against Device1.UUIDs, leaves it
    /// out (man page, NOTES) until a connection resolves its services.
    @Test func uuidsLostAfterAnInterruptedResolutionAreReportedAsBlueZHasThem() async throws {
        try await Sim.with(faults: ["uuids_lost_after_failed_resolution": "true", "services_resolved_never": "true",
                                    "disconnect_delay_ms": "200"]) { sim in
            let connect = await sim.scenarioRun(["connect", World.probe, "--timeout", "5"])
            #expect(connect.run.status == 124, "\(connect.run)")
            try await sim.scenarioExpectClean()

            let scan = await sim.scenarioRun(["scan", "--count", "1", "--timeout", "60", "--name", "blesim Probe"])
            #expect(scan.run.status == 0, "\(scan.run)")
            let lines = scan.run.jsonLines()
            #expect(lines.count == 1, "\(scan.run.stdout)")
            #expect(lines.first?["address"] == .string(World.probe))
            #expect(lines.first?["uuids"] == [], "\(scan.run.stdout)")
            #expect(lines.first?["manufacturer_data"] == ["05f1": "0102"])

            let byService = await sim.scenarioRun(["scan", "--timeout", "5", "--service", "180f"])
            #expect(byService.run.status == 0, "\(byService.run)")
            #expect(scenarioAddresses(byService.run) == [World.gattBattery], "\(byService.run.stdout)")

            // A connection that resolves the services brings them back.
            try await sim.setFault("services_resolved_never", "false")
            let battery = await sim.scenarioRun(["get-battery", World.probe, "--timeout", "30"])
            #expect(battery.run.status == 0, "\(battery.run)")
            let again = await sim.scenarioRun(["scan", "--count", "2", "--timeout", "60", "--service", "180f"])
            #expect(Set(scenarioAddresses(again.run)) == [World.probe, World.gattBattery], "\(again.run.stdout)")
            try await sim.scenarioExpectClean()
        }
    }

    /// Seen on a real bluetoothd 5.66 with two `blectl scan` started together: BlueZ keeps
    /// one pending start per adapter, so one StartDiscovery is never answered although the
    /// adapter discovers for that client too. The scan goes on without the reply (it used to
    /// wait for it to its deadline and end 124 with nothing printed), ends 0 at its timeout,
    /// and leaves no session once it has left the bus.
    @Test func unansweredStartDiscoveryStillScans() async throws {
        try await Sim.with(faults: ["start_discovery_unanswered": "true"]) { sim in
            let r = await sim.scenarioRun(["scan", "--timeout", "5"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(Set(scenarioAddresses(r.run)) == Set(World.known + World.fillers), "\(r.run.stdout)")
            // Not held by the unanswered call: held, it ended 124 with nothing printed (above).
            let calls = try await sim.calls()
            #expect(calls.scenarioOutcomes("StartDiscovery") == ["pending"])
            #expect(calls.scenarioOutcomes("StopDiscovery") == [])
            try await sim.scenarioExpectClean()
        }
    }

    /// 3. StartDiscovery answers InProgress once: one bounded retry, then the scan works.
    @Test func startDiscoveryInProgressOnceIsRetried() async throws {
        try await Sim.with(faults: ["start_discovery_in_progress": "1"]) { sim in
            let r = await sim.scenarioRun(["scan", "--count", "10", "--timeout", "60"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            #expect(Set(scenarioAddresses(r.run)) == Set(World.known + World.fillers))
            let calls = try await sim.calls()
            #expect(calls.scenarioOutcomes("StartDiscovery") == ["error:\(ScenarioWorld.inProgress)", "reply"])
            #expect(calls.scenarioOutcomes("StopDiscovery") == ["reply"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 3. StartDiscovery keeps answering InProgress: exactly two attempts, then exit 5
    /// "adapter busy" (not a loop, not the scan length).
    @Test func startDiscoveryAlwaysInProgressIsBusy() async throws {
        try await Sim.with(faults: ["start_discovery_in_progress": "-1"]) { sim in
            let r = await sim.scenarioRun(["scan", "--timeout", "30"])
            #expect(r.run.status == 5, "\(r.run)")
            #expect(r.run.stdout == "")
            scenarioExpectError(r.run, scenarioError("busy", 5, retryable: true, operation: "discovery", dbusError: ScenarioWorld.inProgress),
                                message: "busy: discovery: adapter busy: discovery could not start (Operation already in progress)")
            r.expectEndedBefore(.seconds(30))
            let calls = try await sim.calls()
            #expect(calls.scenarioOutcomes("StartDiscovery") == Array(repeating: "error:\(ScenarioWorld.inProgress)", count: 2))
            #expect(calls.scenarioOutcomes("StopDiscovery") == [])
            try await sim.scenarioExpectClean()
        }
    }

    /// 4. The adapter powers off mid-scan and StopDiscovery answers NotReady: what was found
    /// is printed as valid JSON Lines, then exit 69; the NotReady does not replace the error.
    @Test func adapterPoweredOffMidScanKeepsWhatWasFound() async throws {
        try await Sim.with(faults: ["power_off_mid_scan_ms": "400"]) { sim in
            let r = await sim.scenarioRun(["scan", "--timeout", "30"])
            #expect(r.run.status == 69, "\(r.run)")
            let addresses = scenarioAddresses(r.run)
            #expect(addresses.count == r.run.lines.count)
            #expect(Set(addresses) == Set(World.known + World.fillers))
            #expect(addresses.count == Set(addresses).count)
            for line in r.run.lines { #expect(topLevelKeys(line) == World.scanKeys) }
            scenarioExpectError(r.run, scenarioError("unavailable", 69, operation: "discovery"),
                                message: "Bluetooth adapter hci0 was powered off during discovery")
            r.expectEndedBefore(.seconds(30))
            try #expect(await sim.calls().scenarioOutcomes("StopDiscovery") == ["error:org.bluez.Error.NotReady"])
            let state = try await sim.state()
            #expect(!state.powered && !state.discovering)
            try await sim.scenarioExpectClean()
        }
    }

    /// 10. Devices BlueZ only has cached from earlier (no RSSI, not advertising) are not
    /// printed by a scan.
    @Test func cachedDevicesAreNotReported() async throws {
        try await Sim.with(faults: ["cached_devices": "true"]) { sim in
            let r = await sim.scenarioRun(["scan", "--count", "10", "--timeout", "60"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            let addresses = scenarioAddresses(r.run)
            #expect(Set(addresses) == Set(World.known + World.fillers))
            #expect(!addresses.contains("C0:FF:EE:00:00:A1") && !addresses.contains("C0:FF:EE:00:00:A2"))
            let state = try await sim.state()
            #expect(state.devices.contains("C0:FF:EE:00:00:A1") && state.devices.contains("C0:FF:EE:00:00:A2"))
            try await sim.scenarioExpectClean()
        }
    }

    /// 11. BlueZ merges the filters of all clients: devices another client's filter let
    /// through are checked again here and not printed.
    @Test func foreignDevicesOutsideOurFilterAreNotReported() async throws {
        try await Sim.with(faults: ["foreign_filter": "true"]) { sim in
            let r = await sim.scenarioRun(["scan", "--timeout", "5", "--service", "180f", "--rssi-min", "-80"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            let objects = r.run.jsonLines()
            #expect(objects.compactMap { $0["address"]?.string }.sorted() == [World.probe, World.gattBattery])
            for object in objects {
                #expect(object["uuids"]?.array?.contains("180f") == true)
                #expect((object["rssi"]?.int ?? -127) >= -80)
            }
            try #expect(await sim.calls().scenarioOutcomes("SetDiscoveryFilter") == ["reply"])
            try await sim.scenarioExpectClean()
        }
    }

    /// 15. Odd names: every line is valid JSON; no name, an empty name and an alias-only
    /// device give null; control characters are escaped; U+FFFD is kept.
    @Test func oddNamesGiveValidJSONLines() async throws {
        try await Sim.with(faults: ["weird_names": "true"]) { sim in
            let r = await sim.scenarioRun(["scan", "--count", "15", "--timeout", "60"])
            #expect(r.run.status == 0, "\(r.run)")
            #expect(r.run.stderr == "")
            var names: [String: J] = [:]
            for object in r.run.jsonLines() {
                if let address = object["address"]?.string, let name = object["name"] { names[address] = name }
            }
            #expect(names["C0:FF:EE:00:00:E1"] == .null)
            #expect(names["C0:FF:EE:00:00:E2"] == .null)
            #expect(names["C0:FF:EE:00:00:E3"] == .string("bad\u{01}\u{1B}[31mname\n"))
            #expect(names["C0:FF:EE:00:00:E4"] == .string("caf\u{FFFD} probe"))
            #expect(names["C0:FF:EE:00:00:E5"] == .null)
            // No raw control character reaches the terminal: only the line ends.
            #expect(!r.run.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
            #expect(r.run.stdout.contains(#""name":"bad\u0001\u001b[31mname\n""#))
            try await sim.scenarioExpectClean()
        }
    }
}
