// `blectl notify --format text`: the device and characteristic, a header, then one line per
// value (time, seq, link, hex, text); link losses and reconnections reported in words.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension NotifyTests {
    static let textContext = "address: C0:FF:EE:00:00:04  service: 180f (Battery)  characteristic: 2a19 (Battery Level)"
    static let textHeader = "TIME                      SEQ    CONNECTION  VALUE             TEXT              DECODED"
    /// The DECODED cell of the simulator's 4-byte counters on 2a19, split at its spaces.
    static let undecodedWords = ["Battery", "Level", "undecodable", "(trailing", "bytes)"]

    @Test("--format text: the device and characteristic, a header, then time, seq, link, hex and text per value; reports in words")
    func textFormat() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--reconnect", "--count", "6",
                                                "--timeout", "60", "--format", "text"])
            #expect(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
            try await sim.burst(World.gattBattery, "2a19", count: 3)
            #expect(await process.stdoutContains("00000003"))
            try await sim.dropLink(World.gattBattery)
            #expect(await process.stderrContains("notifications restored"), "\(process.currentStderr)")
            try await sim.burst(World.gattBattery, "2a19", count: 3)
            let result = try await process.finish()
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 8, "\(result.stdout)")
            #expect(Array(lines.prefix(2)) == [Self.textContext, Self.textHeader])
            for (index, line) in lines.dropFirst(2).enumerated() {
                let fields = line.split(separator: " ").map(String.init)
                let link = index < 3 ? 1 : 2
                #expect(fields.count == 10 && Self.isRFC3339Milliseconds(fields[0]), "\(line)")
                #expect(Array(fields.dropFirst()) == ["\(index + 1)", "\(link)", Self.hex(index % 3 + 1), "-"] + Self.undecodedWords, "\(line)")
            }
            #expect(result.stderr.hasSuffix("\n"))
            #expect(Self.withoutEventTimes(result.stderr) == [
                "blectl: C0:FF:EE:00:00:04: link lost (connection 1); reconnecting",
                "blectl: C0:FF:EE:00:00:04: reconnected (connection 2); notifications restored",
            ])
        }
    }

    @Test("--format text without --reconnect: link 1 throughout; values from a steady notifier")
    func textFormatListening() async throws {
        try await Sim.with(faults: ["notify_every_ms": "50", "notify_every_char": "2a19"]) { sim in
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--count", "4", "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines.count == 6, "\(run)")
            #expect(Array(run.lines.prefix(2)) == [Self.textContext, Self.textHeader])
            for (index, line) in run.lines.dropFirst(2).enumerated() {
                let fields = line.split(separator: " ").map(String.init)
                #expect(fields.count == 10 && Self.isRFC3339Milliseconds(fields[0]), "\(line)")
                #expect(Array(fields.dropFirst()) == ["\(index + 1)", "1", Self.hex(index + 1), "-"] + Self.undecodedWords, "\(line)")
            }
            try await sim.expectClean()
        }
    }
}
