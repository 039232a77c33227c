// A reader that stops reading stdout (a slow consumer, a paused pipeline) must not hold the
// command: the scan ends at its timeout and stops discovery, a signal still ends blectl at
// once, and what reaches the reader is whole JSON lines (found on the real bluetoothd:
// `scan --updates | (sleep 32; wc -l)` used to scan on for 32 s and ignore a first SIGINT).

import Foundation
import SimulatorHarness
import Testing

@Suite struct StalledReaderTests {
    /// 2,000 advertisers changing RSSI: far more than a pipe (64 KiB) and blectl's queue
    /// (256 KiB) hold within the scan.
    static let busy = ["advertisers": "2000", "rssi_churn": "true"]

    func launchBash(_ sim: Sim, _ script: String) async throws -> RunningProcess {
        let simulator = sim.simulator
        return try await offThread { try simulator.launch("/bin/bash", ["-c", script, BlectlBinary.path]) }
    }

    @Test func scanEndsAtItsTimeoutWhileTheReaderSleeps() async throws {
        try await Sim.with(faults: Self.busy) { sim in
            let process = try await launchBash(sim, """
                "$0" scan --updates --timeout 1.5 | (sleep 5; cat); echo "status=${PIPESTATUS[0]}" >&2
                """)
            // The scan's 1.5 s are over; the reader has not read anything yet.
            await pause(.seconds(3))
            let state = try await sim.state()
            #expect(state.discovering == false, "discovery still running while stdout is stalled")
            #expect(state.leftovers == [], "\(state.leftovers)")
            let result = try await process.finish(timeout: .seconds(20))
            #expect(result.stderr.contains("status=0"), "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n")
            // More than a pipe holds: blectl had to wait for the reader.
            #expect(result.stdout.utf8.count > 200_000, "only \(result.stdout.utf8.count) bytes: the reader was never stalled")
            let broken = lines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }
            #expect(broken.isEmpty, "\(broken.prefix(3))")
        }
    }

    @Test func firstSignalEndsAStalledScanAtOnce() async throws {
        try await Sim.with(faults: Self.busy) { sim in
            let process = try await launchBash(sim, """
                "$0" scan --updates --timeout 30 > >(sleep 4; cat) & pid=$!
                sleep 2
                kill -INT $pid; t=$(date +%s%N)
                wait $pid; s=$?
                echo "status=$s ms=$(( ($(date +%s%N) - t) / 1000000 ))" >&2
                sleep 3
                """)
            let result = try await process.finish(timeout: .seconds(20))
            let report = result.stderr.split(separator: "\n").first { $0.hasPrefix("status=") }.map(String.init) ?? ""
            #expect(report.hasPrefix("status=130 "), "\(result.stderr)")
            let ms = Int(report.split(separator: "=").last ?? "") ?? .max
            #expect(ms < 2000, "blectl took \(ms) ms to end after SIGINT")
            let broken = result.stdout.split(separator: "\n").filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }
            #expect(broken.isEmpty, "\(broken.prefix(3))")
            try await sim.scenarioExpectClean()
        }
    }
}
