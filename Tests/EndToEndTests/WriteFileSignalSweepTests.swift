// The signal sweep of `blectl write --file` (make test-signals).

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The signal sweep of `write --file` (as SignalSweepTests for the other subcommands; slow,
/// so only with BLECTL_SIGNAL_SWEEP=1, `make test-signals`): SIGINT/SIGTERM at 52 moments
/// spread from the start to the typical end. blectl ends by the signal with nothing printed,
/// or with 0 and the whole record; no socket, connection or request is left.
@Suite("signal sweep: write --file", .enabled(if: ProcessInfo.processInfo.environment["BLECTL_SIGNAL_SWEEP"] == "1",
                                              "set BLECTL_SIGNAL_SWEEP=1 (make test-signals)"))
struct WriteFileSignalSweepTests {
    @Test func sweep() async throws {
        let data = WriteFileTests.randomBytes(64 * 1024)
        let path = try WriteFileTests.file(data)
        defer { unlink(path) }
        let arguments = ["write", WriteFileTests.echo, WriteFileTests.sink, "--without-response", "--file", path]
        let complete: @Sendable (Run) -> Bool = { run in
            guard let record = J.parse(run.lines.first ?? ""), run.lines.count == 1 else { return false }
            return record["bytes"] == .int(data.count) && record["acquired"] == true
        }
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let clock = ContinuousClock()
            let start = clock.now
            let baseline = await sim.blectl(arguments)
            let typical = clock.now - start
            #expect(complete(baseline), "\(baseline)")
            var tally: [Int32: Int] = [:]
            let deliveries = 52
            for i in 0..<deliveries {
                try #require(await WriteFileTests.leftovers(sim) == [], "not clean before delivery \(i)")
                try await sim.reset()
                let signal = i % 2 == 0 ? SIGINT : SIGTERM
                let delay = typical * (Double(i) / Double(deliveries - 1))
                let process = try await sim.launch(arguments)
                _ = try await offThread { usleep(UInt32(delay / .microseconds(1))) }
                process.sendSignal(signal)
                let result = try await process.finish()
                tally[result.status, default: 0] += 1
                let run = Run(arguments: arguments, status: result.status, stdout: result.stdout, stderr: result.stderr)
                let what = "\(signal == SIGINT ? "SIGINT" : "SIGTERM") at \(delay) (delivery \(i)): \(run)"
                #expect(result.timedOut == false, "\(what)")
                #expect(run.stderr == "", "\(what)")
                if result.status == 0 {
                    #expect(complete(run), "incomplete output: \(what)")
                } else {
                    #expect(result.status == 128 + signal, "\(what)")
                    #expect(run.stdout.isEmpty || complete(run), "\(what)")
                }
                #expect(try await WriteFileTests.leftovers(sim) == [], "left in BlueZ after \(what)")
            }
            print("signal sweep write --file: typical \(typical); exits: "
                  + tally.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))
            #expect((tally[130] ?? 0) + (tally[143] ?? 0) >= deliveries / 2, "most deliveries must land before the end")
        }
    }
}
