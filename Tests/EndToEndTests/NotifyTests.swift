// `blectl notify` against the simulator: one JSON line per value, in order, numbered from 1,
// with a valid time; the timeout (0), --count (0, or 124 when the timeout comes first), a lost
// link (4, or reconnected with --reconnect across forced drops with nothing lost), signals and
// a closed stdout (StopNotify sent, nothing left), --format text, and what the device lacks.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension Sim {
    /// `count` notifications (value i = i as 4 bytes big-endian) back to back on a
    /// characteristic of `address` that has a notification session.
    func burst(_ address: String, _ uuid: String, count: Int) async throws {
        let simulator = simulator
        try await offThread { try simulator.notifyBurst(address: address, characteristic: uuid, count: count) }
    }

    /// The link of `address` drops; its notification sessions are kept (bluetoothd 5.66).
    func dropLink(_ address: String, remove: Bool = false) async throws {
        let simulator = simulator
        try await offThread { try simulator.dropLink(address: address, remove: remove) }
    }
}

extension RunningProcess {
    /// `waitForStderr(containing:timeout:)` off the cooperative pool (a hang guard: it returns
    /// as soon as the text is there).
    func stderrContains(_ needle: String, within timeout: Duration = .seconds(30)) async -> Bool {
        (try? await offThread { self.waitForStderr(containing: needle, timeout: timeout) }) ?? false
    }
}

@Suite("blectl notify")
struct NotifyTests {
    /// The keys of a value record, in order.
    static let recordKeys = ["address", "service", "characteristic", "value", "text", "seq", "time", "connection"]

    /// Value i as the simulator sends it (bursts, notify_every_ms), in hex.
    static func hex(_ i: Int) -> String {
        let digits = String(i, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// `time`: RFC 3339, UTC, exactly three fractional digits.
    static func isRFC3339Milliseconds(_ text: String) -> Bool {
        let pattern = #/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/#
        return text.wholeMatch(of: pattern) != nil
    }

    static func dateFormatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }

    /// Checks every line of `stdout` is a value record of Battery Level (0x2A19 in 0x180F)
    /// of the GATT battery device, keys in order, seq 1..n, with the given values and links,
    /// times valid, not going backwards and within [`from`, `to`].
    static func expectRecords(_ run: Run, values: [String], connections: [Int]? = nil, from: Date, to: Date,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let records = run.jsonLines(sourceLocation: sourceLocation)
        #expect(records.count == values.count, "\(records.count) records, \(values.count) expected", sourceLocation: sourceLocation)
        let seqs = records.map { $0["seq"]?.int ?? -1 }
        let seqsInOrder = seqs == Array(1...max(1, records.count)).prefix(records.count).map { $0 }
        #expect(seqsInOrder, "seq not 1..n: first wrong at \(seqs.indices.first { seqs[$0] != $0 + 1 } ?? -1)", sourceLocation: sourceLocation)
        let got = records.map { $0["value"]?.string ?? "?" }
        let valuesInOrder = got == values
        #expect(valuesInOrder, "values: first wrong at \(got.indices.first { $0 >= values.count || got[$0] != values[$0] } ?? -1)",
                sourceLocation: sourceLocation)
        if let connections {
            #expect(records.map { $0["connection"]?.int ?? -1 } == connections, sourceLocation: sourceLocation)
        }
        var previous = from.addingTimeInterval(-1)
        let formatter = dateFormatter()
        for (line, record) in zip(run.lines, records) {
            if topLevelKeys(line) != recordKeys { Issue.record("keys: \(line)", sourceLocation: sourceLocation); break }
            let fixed = record.removing("value", "seq", "time", "connection")
            if fixed != ["address": "C0:FF:EE:00:00:04", "service": "180f", "characteristic": "2a19", "text": .null] {
                Issue.record("record: \(line)", sourceLocation: sourceLocation); break
            }
            guard let time = record["time"]?.string, isRFC3339Milliseconds(time), let date = formatter.date(from: time) else {
                Issue.record("time: \(line)", sourceLocation: sourceLocation); break
            }
            // The wall clock read when the value arrived: after blectl started, before it
            // ended (a second of slack for the clocks' rounding), never going back.
            if date < previous || date > to.addingTimeInterval(1) {
                Issue.record("time out of order or range: \(line)", sourceLocation: sourceLocation); break
            }
            previous = date
        }
    }

    @Test("--count 10000 against a burst of 10,000: exactly 10,000 lines, seq 1..10000, values in order")
    func tenThousand() async throws {
        try await Sim.with(faults: ["notify_burst": "10000", "notify_burst_char": "2a19"]) { sim in
            let started = Date()
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--count", "10000", "--timeout", "120"], timeout: .seconds(150))
            let ended = Date()
            #expect(run.status == 0, "\(run.status) \(run.stderr)")
            #expect(run.stderr == "")
            #expect(run.lines.count == 10_000)
            Self.expectRecords(run, values: (1...10_000).map(Self.hex), connections: Array(repeating: 1, count: 10_000),
                               from: started, to: ended)
            let calls = try await sim.calls().filter { $0.interface == "org.bluez.GattCharacteristic1" }
            #expect(calls.map(\.member) == ["StartNotify", "StopNotify"])
            #expect(calls.map(\.outcome) == ["reply", "reply"])
            try await sim.expectClean()
        }
    }

    @Test("notify_rate_hz: a stream at a set rate, in batches, stopped at notify_rate_total; every value printed, in order")
    func steadyRate() async throws {
        try await Sim.with(faults: ["notify_rate_hz": "2000", "notify_rate_total": "3000", "notify_every_char": "2a19"]) { sim in
            let started = Date()
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--count", "3000", "--timeout", "120"], timeout: .seconds(150))
            let ended = Date()
            #expect(run.status == 0, "\(run.status) \(run.stderr)")
            #expect(run.stderr == "")
            Self.expectRecords(run, values: (1...3000).map(Self.hex), connections: Array(repeating: 1, count: 3000),
                               from: started, to: ended)
            let simulator = sim.simulator
            let (sent, batches, seconds) = try await offThread {
                let rate = try simulator.stateDictionary()["notify_rate"] as? [String: Any] ?? [:]
                return (rate["sent"] as? Int ?? -1, rate["batches"] as? Int ?? -1, rate["seconds"] as? Double ?? -1)
            }
            // Exactly the total, sent over time (every 5 ms what is due), not in one burst.
            #expect(sent == 3000)
            #expect(batches >= 2)
            #expect(seconds > 0)
            try await sim.expectClean()
        }
    }

    /// Runs blectl with stdout a pipe it reads nothing from until the simulator has sent
    /// `total` values and no notify session is left (blectl asked StopNotify: its --count
    /// was reached, or its timeout), or blectl has ended; then reads it all. Prints
    /// {status, lines, stderr} as JSON.
    static let lateReader = #"""
        import json, os, subprocess, sys, time
        simctl, total = os.environ["BLESIM_SIMCTL"], int(sys.argv[1])
        r, w = os.pipe()
        child = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=w, stderr=subprocess.PIPE)
        os.close(w)
        while child.poll() is None:
            state = json.loads(subprocess.run([simctl, "state"], capture_output=True, text=True, check=True).stdout)
            if state["notify_rate"]["sent"] == total and not state["notify_sessions"]:
                break
            time.sleep(0.02)
        out = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            out += chunk
        err = child.stderr.read()
        print(json.dumps({"status": child.wait(), "lines": out.decode().splitlines(), "stderr": err.decode()}))
        """#

    @Test("a reader that reads nothing until every value is sent: --count is reached when the values arrive, and every one is printed")
    func lateReader() async throws {
        let total = 6000
        try await Sim.with(faults: ["notify_rate_hz": "10000", "notify_rate_total": "\(total)", "notify_every_char": "2a19"]) { sim in
            let simulator = sim.simulator
            let simctl = simulator.repoRoot.appendingPathComponent("sim/simctl").path
            let arguments = ["-c", Self.lateReader, "\(total)", BlectlBinary.path, "notify", World.gattBattery, "2a19",
                             "--count", "\(total)", "--timeout", "20"]
            let run = try await offThread {
                simulator.run("/usr/bin/python3", arguments, environment: ["BLESIM_SIMCTL": simctl], timeout: .seconds(90))
            }
            let object = try #require(J.parse(run.stdout), "driver: \(run)")
            let lines = object["lines"]?.array?.compactMap(\.string) ?? []
            // Before, the consumer waited for the reader once 256 KiB were queued, the values
            // behind stayed unread in the subscription's stream, and the timeout ended the
            // command with 124 and about 2,400 of the 6,000 values printed.
            #expect(object["status"]?.int == 0, "\(object["stderr"]?.string ?? "")")
            #expect(lines.count == total)
            let values = lines.map { J.parse($0)?["value"]?.string }
            let expected = (1...total).map { Self.hex($0) }
            let firstWrong = values.indices.first { $0 >= expected.count || values[$0] != expected[$0] }
            #expect(firstWrong == nil, "line \((firstWrong ?? 0) + 1): \(values[firstWrong ?? 0] ?? "no value")")
            try await sim.expectClean()
        }
    }

    @Test("the timeout reached: 0, with the values received so far")
    func timeoutReached() async throws {
        try await Sim.with(faults: ["notify_burst": "5", "notify_burst_char": "2a19"]) { sim in
            let started = Date()
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--timeout", "8"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            Self.expectRecords(run, values: (1...5).map(Self.hex), connections: [1, 1, 1, 1, 1], from: started, to: Date())
            let members = try await sim.calls().map(\.member)
            #expect(members.filter { ["StartNotify", "StopNotify", "Disconnect"].contains($0) } == ["StartNotify", "StopNotify", "Disconnect"])
            try await sim.expectClean()
        }
    }

    @Test("--count reached: 0 after exactly that many values")
    func countReached() async throws {
        try await Sim.with(faults: ["notify_burst": "20", "notify_burst_char": "2a19"]) { sim in
            let started = Date()
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--count", "7", "--timeout", "20"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            Self.expectRecords(run, values: (1...7).map(Self.hex), from: started, to: Date())
            try #expect(await sim.calls().contains { $0.member == "StopNotify" && $0.outcome == "reply" })
            try await sim.expectClean()
        }
    }

    @Test("the simulator's counter notifications leave the level a read answers: 55 before and after, by read and get-battery",
          arguments: [["notify_every_ms": "50"], ["notify_burst": "5"], ["notify_rate_hz": "200"]])
    func countersLeaveTheReadValue(faults: [String: String]) async throws {
        try await Sim.with(faults: faults.merging(["notify_every_char": "2a19", "notify_burst_char": "2a19"]) { $1 }) { sim in
            let before = await sim.blectl(["read", World.gattBattery, "2a19", "--timeout", "20"])
            #expect(before.jsonObject()?["value"] == "37", "\(before)")
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--count", "3", "--timeout", "20"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.split(separator: "\n").compactMap { J.parse(String($0))?["value"]?.string } == (1...3).map(Self.hex))
            let after = await sim.blectl(["read", World.gattBattery, "2a19", "--timeout", "20"])
            #expect(after.jsonObject()?["value"] == "37", "\(after)")
            let battery = await sim.blectl(["get-battery", World.gattBattery, "--timeout", "20"])
            #expect(battery.jsonObject()?["percentage"] == 55, "\(battery)")
        }
    }

    @Test("--count not reached before the timeout: 124 naming the notifications, the values printed")
    func countNotReached() async throws {
        try await Sim.with(faults: ["notify_burst": "5", "notify_burst_char": "2a19"]) { sim in
            let started = Date()
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--count", "10", "--timeout", "8"])
            #expect(run.status == 124, "\(run)")
            Self.expectRecords(run, values: (1...5).map(Self.hex), from: started, to: Date())
            let error = try #require(run.jsonError())
            #expect(error.removing("message") == ["code": "timed_out", "exit_status": 124, "operation": "notifications",
                                                  "address": "C0:FF:EE:00:00:04", "service": "180f", "characteristic": "2a19",
                                                  "dbus_error": .null])
            #expect(error["message"] == "timed out waiting for notifications of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:04")
            try #expect(await sim.calls().contains { $0.member == "StopNotify" && $0.outcome == "reply" })
            try await sim.expectClean()
        }
    }

    @Test("a lost link without --reconnect: 4 after the values received; the kept session stopped")
    func linkLost() async throws {
        try await Sim.with { sim in
            let started = Date()
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--timeout", "30"])
            #expect(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
            try await sim.burst(World.gattBattery, "2a19", count: 100)
            #expect(await process.stdoutContains("\"seq\":100,"))
            try await sim.dropLink(World.gattBattery)
            let result = try await process.finish()
            let run = Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 4, "\(run)")
            Self.expectRecords(run, values: (1...100).map(Self.hex), from: started, to: Date())
            let error = try #require(run.jsonError())
            #expect(error.removing("message") == ["code": "disconnected", "exit_status": 4, "operation": "notifications",
                                                  "address": "C0:FF:EE:00:00:04", "service": "180f", "characteristic": "2a19",
                                                  "dbus_error": .null])
            // bluetoothd keeps a StartNotify session over a link loss: blectl ends it. The link
            // itself is gone: nothing to disconnect.
            let calls = try await sim.calls().filter { $0.interface == "org.bluez.GattCharacteristic1" }
            #expect(calls.map(\.member) == ["StartNotify", "StopNotify"])
            #expect(calls.map(\.outcome) == ["reply", "reply"])
            try #expect(await sim.calls().filter { $0.interface == "org.bluez.Device1" }.map(\.member) == ["Connect"])
            try await sim.expectClean()
        }
    }

    @Test("--reconnect across 3 forced drops: no value lost, links 1..4, each loss and reconnection on stderr")
    func reconnectAcrossThreeDrops() async throws {
        try await Sim.with { sim in
            let started = Date()
            let perLink = 250
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--reconnect", "--count", String(4 * perLink),
                                                "--timeout", "60"])
            #expect(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
            for link in 1...4 {
                // Every value sent while a link is up must come out, whatever happens after.
                try await sim.burst(World.gattBattery, "2a19", count: perLink)
                #expect(await process.stdoutContains("\"seq\":\(link * perLink),"), "link \(link)")
                guard link < 4 else { break }
                try await sim.dropLink(World.gattBattery)
                #expect(await process.stderrContains("\"event\":\"reconnected\",\"address\":\"C0:FF:EE:00:00:04\",\"connection\":\(link + 1)}"),
                        "no reconnection \(link + 1): \(process.currentStderr)")
            }
            let result = try await process.finish()
            let run = Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 0, "\(run.status) \(run.stderr)")
            Self.expectRecords(run, values: (1...4).flatMap { _ in (1...perLink).map(Self.hex) },
                               connections: (1...4).flatMap { Array(repeating: $0, count: perLink) }, from: started, to: Date())
            let address = "\"address\":\"C0:FF:EE:00:00:04\""
            #expect(run.stderr.split(separator: "\n").map(String.init) == [
                "{\"event\":\"link_lost\",\(address),\"connection\":1}",
                "{\"event\":\"reconnected\",\(address),\"connection\":2}",
                "{\"event\":\"link_lost\",\(address),\"connection\":2}",
                "{\"event\":\"reconnected\",\(address),\"connection\":3}",
                "{\"event\":\"link_lost\",\(address),\"connection\":3}",
                "{\"event\":\"reconnected\",\(address),\"connection\":4}",
            ])
            // Connected four times; the subscription restored on each link (StartNotify again,
            // answered InProgress while bluetoothd re-enables the kept session); stopped once.
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.map(\.outcome) == Array(repeating: "reply", count: 4))
            #expect(calls.filter { $0.member == "StartNotify" && $0.outcome == "reply" }.count == 4)
            #expect(calls.filter { $0.member == "StopNotify" }.map(\.outcome) == ["reply"])
            #expect(calls.last?.member == "Disconnect", "\(calls.suffix(3))")
            try await sim.expectClean()
        }
    }

    @Test("--reconnect after the device object went away: found again by scanning, subscribed anew")
    func reconnectAfterRemoval() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--reconnect", "--count", "60", "--timeout", "60"])
            #expect(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
            try await sim.burst(World.gattBattery, "2a19", count: 30)
            #expect(await process.stdoutContains("\"seq\":30,"))
            try await sim.dropLink(World.gattBattery, remove: true)
            #expect(await process.stderrContains("\"connection\":2}"), "\(process.currentStderr)")
            try await sim.burst(World.gattBattery, "2a19", count: 30)
            let result = try await process.finish()
            let run = Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 0, "\(run.status) \(run.stderr)")
            let records = run.jsonLines()
            #expect(records.map { $0["value"]?.string ?? "" } == (1...30).map(Self.hex) + (1...30).map(Self.hex))
            #expect(records.map { $0["connection"]?.int ?? 0 } == Array(repeating: 1, count: 30) + Array(repeating: 2, count: 30))
            #expect(records.map { $0["seq"]?.int ?? 0 } == Array(1...60))
            try #expect(await sim.calls().contains { $0.member == "StartDiscovery" })
            try await sim.expectClean()
        }
    }

    @Test("--reconnect, the device unreachable until the timeout: 0 (124 with --count), each failed attempt on stderr",
          arguments: [false, true])
    func reconnectUntilTheTimeout(withCount: Bool) async throws {
        try await Sim.with(faults: ["notify_burst": "5", "notify_burst_char": "2a19"]) { sim in
            let count = withCount ? ["--count", "10"] : []
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--reconnect", "--timeout", "8"] + count)
            #expect(await process.stdoutContains("\"seq\":5,"), "no values: \(process.currentStderr)")
            try await sim.setFault("connect_fail", "le-connection-abort-by-local")
            try await sim.dropLink(World.gattBattery)
            let result = try await process.finish()
            let run = Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == (withCount ? 124 : 0), "\(run)")
            #expect(run.jsonLines().map { $0["value"]?.string ?? "" } == (1...5).map(Self.hex))
            let events = run.stderr.split(separator: "\n").compactMap { J.parse(String($0)) }
            #expect(events.first == ["event": "link_lost", "address": "C0:FF:EE:00:00:04", "connection": 1], "\(run.stderr)")
            let failures = events.filter { $0["event"] == "reconnect_failed" }
            #expect(!failures.isEmpty, "\(run.stderr)")
            for (index, failure) in failures.enumerated() {
                // The backoff: the next attempt 0.4 s after the first, then 0.8 s, 1.6 s, 2 s.
                #expect(failure.removing("message") == ["event": "reconnect_failed", "address": "C0:FF:EE:00:00:04",
                                                         "attempt": .int(index + 1), "retry_in_ms": .int([400, 800, 1600, 2000][min(index, 3)])])
                #expect(failure["message"]?.string?.contains("le-connection-abort-by-local") == true, "\(failure)")
            }
            #expect(!events.contains { $0["event"] == "reconnected" })
            if withCount {
                #expect(events.last?["error"]?["code"] == "timed_out", "\(run.stderr)")
                #expect(events.last?["error"]?["operation"] == "notifications", "\(run.stderr)")
            } else {
                #expect(events.allSatisfy { $0["error"] == nil }, "\(run.stderr)")
            }
            // The session bluetoothd kept over the loss is stopped all the same.
            try #expect(await sim.calls().filter { $0.member == "StopNotify" }.map(\.outcome) == ["reply"])
            try await sim.expectClean()
        }
    }

    static let textContext = "address: C0:FF:EE:00:00:04  service: 180f (Battery)  characteristic: 2a19 (Battery Level)"
    static let textHeader = "TIME                      SEQ    CONNECTION  VALUE             TEXT"

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
                #expect(fields.count == 5 && Self.isRFC3339Milliseconds(fields[0]), "\(line)")
                #expect(Array(fields.dropFirst()) == ["\(index + 1)", "\(link)", Self.hex(index % 3 + 1), "-"], "\(line)")
            }
            #expect(result.stderr == """
                blectl: C0:FF:EE:00:00:04: link lost (connection 1); reconnecting
                blectl: C0:FF:EE:00:00:04: reconnected (connection 2); notifications restored

                """)
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
                #expect(fields.count == 5 && Self.isRFC3339Milliseconds(fields[0]), "\(line)")
                #expect(Array(fields.dropFirst()) == ["\(index + 1)", "1", Self.hex(index + 1), "-"], "\(line)")
            }
            try await sim.expectClean()
        }
    }

    @Test("interrupted while listening: 130/143, StopNotify sent, the lines printed whole, nothing left",
          arguments: [SIGINT, SIGTERM])
    func interrupted(_ signal: Int32) async throws {
        try await Sim.with(faults: ["notify_every_ms": "20", "notify_every_char": "2a19"]) { sim in
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--timeout", "inf"])
            #expect(await process.stdoutContains("\"seq\":5,"), "no values: \(process.currentStderr)")
            process.sendSignal(signal)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: signal, sim: sim)
            let lines = result.stdout.split(separator: "\n").compactMap { J.parse(String($0)) }
            #expect(lines.map { $0["seq"]?.int ?? 0 } == Array(1...max(1, lines.count)).prefix(lines.count).map { $0 })
            #expect(lines.map { $0["value"]?.string ?? "" } == (1...max(1, lines.count)).prefix(lines.count).map(Self.hex))
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "StopNotify" }.map(\.outcome) == ["reply"], "\(calls.map(\.member))")
            #expect(calls.contains { $0.member == "Disconnect" })
        }
    }

    @Test("interrupted while reconnecting: the pending Connect cancelled, the kept session stopped, nothing left")
    func interruptedWhileReconnecting() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--reconnect", "--timeout", "60"])
            #expect(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
            try await sim.setFault("connect_never_answers", "1")
            try await sim.dropLink(World.gattBattery)
            #expect(try await sim.waitForState { $0.pendingConnects == [World.gattBattery] }, "no reconnection attempted")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.status == 130, "\(result.stderr)")
            #expect(result.stdout == "")
            #expect(result.stderr == "{\"event\":\"link_lost\",\"address\":\"C0:FF:EE:00:00:04\",\"connection\":1}\n")
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "StopNotify" }.map(\.outcome) == ["reply"], "\(calls.map(\.member))")
            #expect(calls.filter { $0.interface == "org.bluez.Device1" }.map(\.member) == ["Connect", "Connect", "Disconnect"])
            try await sim.expectClean()
        }
    }

    /// Lines are written in batches (the values read together), never held for a value that
    /// has not come: each burst's last line is on stdout while blectl waits for the next.
    @Test("each value's line is written before the next value arrives: a burst of 1, then of 3, each on stdout while blectl waits")
    func writtenWithoutWaitingForTheNextValue() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--timeout", "60"])
            #expect(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
            try await sim.burst(World.gattBattery, "2a19", count: 1)
            #expect(await process.stdoutContains("\"seq\":1,"), "the only value was not written: \(process.currentStderr)")
            try await sim.burst(World.gattBattery, "2a19", count: 3)
            #expect(await process.stdoutContains("\"seq\":4,"), "the burst's last value was not written: \(process.currentStderr)")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.status == 130, "\(result.stderr)")
            let records = result.stdout.split(separator: "\n").compactMap { J.parse(String($0)) }
            #expect(records.map { $0["seq"]?.int ?? 0 } == [1, 2, 3, 4])
            #expect(records.map { $0["value"]?.string ?? "" } == ["00000001", "00000001", "00000002", "00000003"])
            try await sim.expectClean()
        }
    }

    @Test("notify | head -n 1: stopped at the next value, StopNotify sent, 141")
    func closedPipe() async throws {
        try await Sim.with(faults: ["notify_every_ms": "50", "notify_every_char": "2a19"]) { sim in
            let run = await ClosedPipeTests.pipeline(sim, ["notify", World.gattBattery, "2a19", "--timeout", "15"], into: "head -n 1")
            #expect(run.status == 141, "\(run)")
            #expect(run.stderr == "")
            #expect(J.parse(run.lines.first ?? "")?["seq"] == 1, "\(run)")
            try #expect(await sim.calls().contains { $0.member == "StopNotify" && $0.outcome == "reply" })
            try await sim.expectClean()
        }
    }

    @Test("what the device lacks: 3 for a characteristic it does not have or that cannot notify")
    func notSupported() async throws {
        try await Sim.with { sim in
            let missing = await sim.blectl(["notify", World.gattBattery, "2a26", "--timeout", "20"])
            #expect(missing.status == 3, "\(missing)")
            #expect(missing.stdout == "")
            #expect(missing.jsonError()?["code"] == "not_supported")
            // Firmware Revision (0x2A26) is read-only on the probe: refused before any StartNotify.
            let readOnly = await sim.blectl(["notify", World.probe, "2a26", "--timeout", "20"])
            #expect(readOnly.status == 3, "\(readOnly)")
            #expect(readOnly.jsonError()?["operation"] == "notification_setup")
            #expect(readOnly.jsonError()?["message"]?.string?.hasSuffix("cannot notify (flags: read)") == true, "\(readOnly)")
            try #expect(await sim.calls().filter { $0.member == "StartNotify" } == [])
            try await sim.expectClean()
        }
    }

    @Test("--service chooses the service; one that lacks the characteristic is 3")
    func serviceOption() async throws {
        try await Sim.with(faults: ["notify_burst": "2", "notify_burst_char": "2a19"]) { sim in
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--service", "180f", "--count", "2"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonLines().map { $0["service"] } == ["180f", "180f"])
            let wrong = await sim.blectl(["notify", World.gattBattery, "2a19", "--service", "1801", "--count", "2"])
            #expect(wrong.status == 3, "\(wrong)")
            #expect(wrong.jsonError()?["service"] == "1801")
            try await sim.expectClean()
        }
    }

    @Test("scan --timeout inf scans until interrupted")
    func scanUntilInterrupted() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["scan", "--timeout", "inf"])
            #expect(await process.stdoutContains("C0:FF:EE:00:00:05"), "no device reported")
            try #expect(await sim.state().discoverySessions.count == 1)
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
        }
    }
}
