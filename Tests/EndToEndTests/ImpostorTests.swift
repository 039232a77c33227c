// Anyone on the bus may send a signal, even straight to blectl (destination set, no match
// rule needed): only signals from org.bluez's current unique owner are BlueZ's (STYLE.md
// 11). sim/impostor claims, every 5 ms, that devices disconnected and vanished, that the
// batteries are at 1 % and that the vendor device answered `82 01`; blectl's results must
// not change.

import SimulatorHarness
import Testing

@Suite("an impostor speaking for bluetoothd", .serialized)
struct ImpostorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        /// The one JSON object printed; nil for scan (compared with the run without the impostor).
        var expected: J?
        var testDescription: String {
            arguments.prefix(2).joined(separator: " ") + (arguments.contains("--vendor-service") ? " (vendor)" : "")
        }
    }

    /// Device commands get 30 s (a run takes about 1 s): the outcome ends the run, not a
    /// clock a loaded machine may not keep.
    static let limit = ["--timeout", "30"]

    /// The scan ends by --count at the ten devices (its StartDiscovery held until the impostor
    /// reached it, so no length has to give the impostor time); the check is that the ten are
    /// the ten of the run without the impostor, as they were reported there: a device the
    /// impostor made up or made vanish shows in the set or keeps the scan to its timeout.
    static let cases: [Case] = [
        Case(arguments: ["scan", "--count", "10"] + Self.limit, expected: nil),
        Case(arguments: ["connect", World.probe] + Self.limit, expected: ConnectTests.probeTree),
        Case(arguments: ["get-version", World.probe] + Self.limit, expected: VersionTests.probeVersion),
        Case(arguments: ["get-version", World.vendor] + Self.limit + World.vendorOptions,
             expected: ["address": "C0:FF:EE:00:00:02", "source": "vendor", "firmware_revision": "2.0.7",
                        "hardware_revision": .null, "software_revision": .null, "manufacturer_name": .null,
                        "model_number": .null]),
        Case(arguments: ["get-battery", World.probe] + Self.limit, expected: ["address": "C0:FF:EE:00:00:01", "percentage": 87, "source": "battery1"]),
        Case(arguments: ["get-battery", World.battery1] + Self.limit, expected: ["address": "C0:FF:EE:00:00:03", "percentage": 42, "source": "battery1"]),
        Case(arguments: ["get-battery", World.gattBattery] + Self.limit, expected: ["address": "C0:FF:EE:00:00:04", "percentage": 55, "source": "gatt"]),
        Case(arguments: ["get-battery", World.vendor] + Self.limit + World.vendorOptions,
             expected: ["address": "C0:FF:EE:00:00:02", "percentage": 64, "source": "vendor"]),
        Case(arguments: ["get-battery", World.probe] + Self.limit + World.vendorOptions,
             expected: ["address": "C0:FF:EE:00:00:01", "percentage": 87, "source": "vendor"]),
    ]

    /// A scan's records by address, without `rssi` (it jitters), each address once.
    static func scanRecords(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) -> [String: J] {
        var out: [String: J] = [:]
        for record in run.jsonLines(sourceLocation: sourceLocation) {
            guard let address = record["address"]?.string else { continue }
            #expect(out[address] == nil, "\(address) printed twice: \(run)", sourceLocation: sourceLocation)
            out[address] = record.removing("rssi", "time", "first_seen", "last_seen")
        }
        return out
    }

    /// Runs blectl with its Connect held (connect_held; a scan's StartDiscovery:
    /// start_discovery_held) until the impostor's report names blectl's unique name (the
    /// sender of that call): however slow the machine, the impostor's claims reach blectl
    /// while it works (a run of about a second did not always overlap one of its rounds under
    /// load, and a scan of a few seconds is such a run under ThreadSanitizer).
    static func runReached(_ sim: Sim, _ impostor: Impostor, _ arguments: [String]) async throws -> Run {
        let (fault, member) = arguments[0] == "scan" ? ("start_discovery_held", "StartDiscovery") : ("connect_held", "Connect")
        try await sim.setFault(fault, "1")
        let process = try await sim.launch(arguments)
        let held = try await sim.scenarioWaitForCall(timeout: .seconds(60)) { $0.member == member }
        let caller = try await sim.calls().first { $0.member == member }?.sender
        let reached = try await offThread { caller.map { impostor.waitUntilReached($0, timeout: .seconds(60)) } ?? false }
        try await sim.setFault(fault, "0")
        let run = Run(arguments: arguments, result: try await process.finish(timeout: .seconds(60)))
        #expect(held && reached, "\(member) from \(caller ?? "nobody"); the impostor reached it: \(reached); \(run)")
        return run
    }

    @Test("results unchanged with the impostor running: same values, exit 0, nothing left", arguments: cases)
    func unchanged(_ c: Case) async throws {
        // Without the impostor, on a simulator of its own.
        let baseline = try await Sim.with { sim in await sim.blectl(c.arguments) }
        #expect(baseline.status == 0, "baseline: \(baseline)")

        try await Sim.with { sim in
            let impostor = try await sim.startImpostor()

            let run = try await Self.runReached(sim, impostor, c.arguments)
            let report = try await impostor.finish()

            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "", "\(run)")
            if let expected = c.expected {
                #expect(run.jsonObject() == expected)
                #expect(baseline.jsonObject() == expected, "baseline")
            } else {
                let records = Self.scanRecords(run)
                let before = Self.scanRecords(baseline)
                #expect(Set(records.keys) == Set(World.known + World.fillers), "\(run)")
                #expect(records == before)
                for (address, known) in ScanTests.knownRecords {
                    #expect(records[address] == known.record, "\(address)")
                }
            }
            // The impostor did reach blectl: blectl's unique name (the sender of every
            // org.bluez call) is among its destinations.
            let callers = try await sim.callers()
            #expect(callers.count == 1, "\(callers)")
            #expect(callers.isSubset(of: Set(report.destinations)), "impostor: \(report), blectl: \(callers)")
            #expect(report.rounds > 1 && report.signals > 0, "\(report)")
            try await sim.scenarioExpectClean()
        }
    }

    /// Only the value claims (Battery1 at 1 %, the vendor answer `82 01`, Battery Level 1):
    /// the device lookup and the link are left alone, so what shows is a value no device
    /// sent being reported.
    @Test("no value the impostor claims is reported (value claims only)", arguments: cases.filter { $0.arguments[0] == "get-battery" })
    func noClaimedValue(_ c: Case) async throws {
        try await Sim.with { sim in
            let impostor = try await sim.startImpostor(claims: ["battery1", "vendor", "level"])

            let run = try await Self.runReached(sim, impostor, c.arguments)
            let report = try await impostor.finish()
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "", "\(run)")
            #expect(run.jsonObject() == c.expected)
            #expect(try await sim.callers().isSubset(of: Set(report.destinations)), "\(report)")
            try await sim.scenarioExpectClean()
        }
    }
}
