// Signals that reach blectl in one read (one batch): every value they carry counts, in
// order, once. A change must carry its value, not a property name looked up later in a
// cache that has moved on (STYLE.md, BlueR).
//
// "In one read" is made certain with the simulator's hold_client_ms: blectl's process is
// stopped while the group is sent and continued 50 ms later, as a client that did not get
// the CPU for a moment; State().holds says it happened.

import SimulatorHarness
import Testing

@Suite("signals sharing a batch")
struct BatchedSignalTests {
    struct VendorCase: Sendable, CustomTestStringConvertible {
        var command: String
        var address: String
        var expected: J
        var testDescription: String { "\(command) \(address)" }
    }

    /// The vendor device answers the request and at once sends an unrelated notification
    /// `7f 00` on the same characteristic (fault unsolicited_after_answer): both arrive in one
    /// read. The answer arrived, so the command succeeds with it.
    @Test("vendor answer followed at once by an unrelated notification: the answer is taken", arguments: [
        VendorCase(command: "get-battery", address: World.vendor,
                   expected: ["address": "C0:FF:EE:00:00:02", "percentage": 64, "source": "vendor"]),
        VendorCase(command: "get-battery", address: World.probe,
                   expected: ["address": "C0:FF:EE:00:00:01", "percentage": 87, "source": "vendor"]),
        VendorCase(command: "get-version", address: World.vendor,
                   expected: ["address": "C0:FF:EE:00:00:02", "source": "vendor", "firmware_revision": "2.0.7",
                              "hardware_revision": .null, "software_revision": .null, "manufacturer_name": .null,
                              "model_number": .null]),
    ])
    func vendorAnswerThenUnsolicited(_ c: VendorCase) async throws {
        try await Sim.with(faults: ["unsolicited_after_answer": "1", "hold_client_ms": "50"]) { sim in
            let run = await sim.blectl([c.command, c.address, "--timeout", "30"] + World.vendorOptions)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "", "\(run)")
            #expect(run.jsonObject() == c.expected)
            // One request, one notification session, stopped.
            let calls = try await sim.calls()
            #expect(calls.scenarioOutcomes("WriteValue") == ["reply"], "\(calls.scenarioMembers)")
            #expect(calls.scenarioOutcomes("StartNotify") == ["reply"])
            #expect(calls.scenarioOutcomes("StopNotify") == ["reply"])
            #expect(try await sim.state().holds == 1, "the answer and 7f 00 were not sent as one group")
            try await sim.scenarioExpectClean()
        }
    }

    /// One device's RSSI changes twice back to back (-70 then -40, fault rssi_back_to_back):
    /// both changes reach blectl in one read, and `--updates` prints each once, in order.
    @Test("scan --updates: two RSSI changes in one batch are both printed, in order, once each")
    func rssiChangesInOneBatch() async throws {
        try await Sim.with(faults: ["rssi_back_to_back": World.probe, "hold_client_ms": "50"]) { sim in
            let run = await sim.blectl(["scan", "--updates", "--timeout", "5", "--name", "Probe"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "", "\(run)")
            let records = run.jsonLines()
            #expect(Set(records.compactMap { $0["address"]?.string }) == [World.probe], "\(run)")
            for record in records {
                #expect(record.removing("rssi", "time", "first_seen", "last_seen") == ScanTests.knownRecords[World.probe]!.record, "\(record)")
            }
            let rssis = scanRSSIs(run, of: World.probe)
            // The first sighting (-55 ± 2), then the two readings of the pair, in order. Later
            // readings come from the 700 ms ticks (-55 ± 12, so never -70 or -40).
            #expect(rssis.first.map { (-57 ... -53).contains($0) } == true, "first sighting: \(rssis)")
            #expect(rssis.filter { $0 == -70 || $0 == -40 } == [-70, -40], "the pair: \(rssis)")
            if let i = rssis.firstIndex(of: -70) {
                #expect(rssis.dropFirst(i + 1).first == -40, "-40 right after -70: \(rssis)")
            }
            // An update line is printed for a change: never the same reading twice in a row.
            #expect(zip(rssis, rssis.dropFirst()).allSatisfy { $0 != $1 }, "a reading printed twice: \(rssis)")
            #expect(try await sim.state().holds == 1, "the two RSSI changes were not sent as one group")
            try await sim.scenarioExpectClean()
        }
    }
}
