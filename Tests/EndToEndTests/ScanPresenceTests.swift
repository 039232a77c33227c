// `blectl scan` for a broker: --min-interval, --changes-only, --lost-after, first_seen and
// last_seen, against the simulator (RSSI churn; the device fault `silent`, sim/README.md).

import Foundation
import SimulatorHarness
import Testing

@Suite("blectl scan: --min-interval, --changes-only, --lost-after")
struct ScanPresenceTests {
    /// Each record's lines by address, in order.
    static func linesByAddress(_ records: [J]) -> [String: [J]] {
        Dictionary(grouping: records.filter { $0["event"] == nil }, by: { $0["address"]?.string ?? "" })
    }

    @Test("--min-interval 1 under RSSI churn every 200 ms: at most one line a second per device, the newest RSSI printed as each interval ends")
    func minInterval() async throws {
        try await Sim.with(faults: ["advertisers": "20", "rssi_churn": "true"]) { sim in
            let run = await sim.blectl(["scan", "--updates", "--min-interval", "1", "--timeout", "6", "--rssi-min", "-127"])
            #expect(run.status == 0, "\(run)")
            let bench = Self.linesByAddress(run.jsonLines()).filter { $0.key.hasPrefix("D0:00:") }
            #expect(bench.count == 20, "\(bench.keys.sorted())")
            // Lines are at least a second apart: within 6 s, at most the first and one a second
            // (unthrottled, the churn gives five a second: about 30).
            for (address, lines) in bench {
                #expect(lines.count <= 7, "\(address): \(lines.count) lines")
                // Each line carries its own sighting's time, first_seen that of the first.
                #expect(lines.allSatisfy { $0["first_seen"] == lines[0]["time"] && $0["last_seen"] == $0["time"] }, "\(lines)")
            }
            // A scan this long outlasts the first interval: held RSSI changes were printed.
            #expect(bench.values.contains { $0.count >= 2 }, "\(bench.mapValues(\.count))")
            #expect(bench.values.reduce(0) { $0 + $1.count } <= 20 * 7)
            try await sim.expectClean()
        }
    }

    @Test("--changes-only: one line per device when only RSSI changes; the same scan with --updates alone prints many")
    func changesOnly() async throws {
        try await Sim.with(faults: ["advertisers": "10", "rssi_churn": "true"]) { sim in
            let run = await sim.blectl(["scan", "--updates", "--changes-only", "--timeout", "3", "--rssi-min", "-127"])
            #expect(run.status == 0, "\(run)")
            let byAddress = Self.linesByAddress(run.jsonLines())
            let bench = byAddress.filter { $0.key.hasPrefix("D0:00:") }
            #expect(bench.count == 10, "\(byAddress.keys.sorted())")
            // Their data never changes: the first sighting is the only line.
            #expect(bench.allSatisfy { $0.value.count == 1 }, "\(bench.mapValues(\.count).filter { $0.value > 1 })")
            let all = await sim.blectl(["scan", "--updates", "--timeout", "3", "--rssi-min", "-127"])
            let unthrottled = Self.linesByAddress(all.jsonLines()).filter { $0.key.hasPrefix("D0:00:") }
            #expect(unthrottled.contains { $0.value.count > 1 }, "\(unthrottled.mapValues(\.count))")
        }
    }

    @Test("--lost-after 3: a device gone silent is lost, with when it was last heard; back, it is printed as new")
    func lostThenNew() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["scan", "--lost-after", "3", "--address", World.probe, "--timeout", "60"])
            #expect(await process.stdoutContains("\"address\":\"\(World.probe)\""), "never printed: \(process.currentStderr)")
            try await sim.setDeviceFault(World.probe, "silent")
            #expect(await process.stdoutContains("{\"event\":\"lost\",\"address\":\"\(World.probe)\",\"last_seen\":"), "never lost: \(process.currentStdout)")
            try await sim.setDeviceFault(World.probe, "silent", on: false)
            // Back: its next sighting is printed again, as the line after the lost event.
            let back = await Self.waitForLines(process, count: 3)
            #expect(back, "not printed again: \(process.currentStdout)")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.status == 130, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").compactMap { J.parse(String($0)) }
            try #require(lines.count == 3, "\(result.stdout)")
            let (first, lost, again) = (lines[0], lines[1], lines[2])
            #expect(first.keys == Set(World.scanKeys) && again.keys == Set(World.scanKeys))
            #expect(first["first_seen"] == first["time"] && first["last_seen"] == first["time"])
            #expect(lost.keys == ["address", "event", "last_seen"])
            #expect(lost["address"] == .string(World.probe) && lost["event"] == "lost")
            // Last heard after its first line (sightings keep it present, printed or not),
            // and before it was heard again, as new.
            let times = try [first["time"], lost["last_seen"], again["first_seen"]].map { try #require($0?.string) }
            #expect(times == times.sorted() && times[1] < times[2], "\(times)")
            #expect(again["first_seen"] == again["time"], "\(again)")
            try await sim.expectClean()
        }
    }

    @Test("--lost-after in the text table: a row for the lost device")
    func lostText() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["scan", "--format", "text", "--lost-after", "3", "--address", World.probe, "--timeout", "60"])
            #expect(await process.stdoutContains(World.probe), "never printed: \(process.currentStderr)")
            try await sim.setDeviceFault(World.probe, "silent")
            #expect(await process.stdoutContains("\(World.probe)  lost, last seen 20"), "\(process.currentStdout)")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.status == 130, "\(result.stderr)")
            try await sim.expectClean()
        }
    }

    /// Waits (up to 30 s, however loaded the machine) until the process has written `count` lines.
    static func waitForLines(_ process: RunningProcess, count: Int) async -> Bool {
        await eventually(within: .seconds(30), every: .milliseconds(20)) {
            process.currentStdout.split(separator: "\n").count >= count
        }
    }
}
