// `blectl notify` against the simulator: one JSON line per value, in order, numbered from 1,
// with a valid time; the timeout (0), --count (0, or 124 when the timeout comes first), each
// line written without waiting for the next value, and what the device lacks. Elsewhere:
// NotifyTests+Reconnect.swift (a lost link: 4, or reconnected with --reconnect),
// NotifyTests+TextFormat.swift (--format text), NotifyTests+Interruption.swift (signals and
// a closed stdout: StopNotify sent, nothing left).

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
    static let recordKeys = ["address", "service", "characteristic", "value", "text", "decoded", "seq", "time", "connection"]

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

    /// Standard error's lines with each `--reconnect` event's `time` checked and taken out, as
    /// the lines were before events had one: the JSON key right after `address`, the text's
    /// word right after `blectl: `; each RFC 3339 with milliseconds, none before the one above.
    static func withoutEventTimes(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        var previous = ""
        return stderr.split(separator: "\n").map { part in
            var line = String(part)
            var time: String?
            if line.hasPrefix("{\"event\":") {
                if let match = line.firstMatch(of: #/("address":"[^"]*"),"time":"([^"]*)"/#) {
                    time = String(match.2)
                    line.replaceSubrange(match.range, with: String(match.1))
                }
            } else if let match = line.firstMatch(of: #/^blectl: ([^ ]+) /#), !line.hasPrefix("blectl: error:") {
                time = String(match.1)
                line.replaceSubrange(match.range, with: "blectl: ")
            } else {
                return line
            }
            #expect(time.map(isRFC3339Milliseconds) == true, "no time after the address: \(part)", sourceLocation: sourceLocation)
            #expect((time ?? "") >= previous, "times out of order: \(stderr)", sourceLocation: sourceLocation)
            previous = time ?? previous
            return line
        }
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
            // The simulator's counters are 4 bytes: not a Battery Level, and said so.
            if fixed != ["address": "C0:FF:EE:00:00:04", "service": "180f", "characteristic": "2a19", "text": .null,
                         "decoded": ["name": "Battery Level", "undecodable": "trailing bytes"]] {
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

    /// With StartNotify: values come through the bus, which queues a burst whole. (An acquired
    /// socket holds what bluetoothd's send buffer does, about 200 values, and bluetoothd drops
    /// what does not fit: a back-to-back burst of 10,000 is not what a link delivers.)
    @Test("--start-notify --count 10000 against a burst of 10,000: exactly 10,000 lines, seq 1..10000, values in order")
    func tenThousand() async throws {
        try await Sim.with(faults: ["notify_burst": "10000", "notify_burst_char": "2a19"]) { sim in
            let started = Date()
            let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--start-notify", "--count", "10000", "--timeout", "120"],
                                       timeout: .seconds(150))
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
            // The acquired socket is closed at the end: no StopNotify (expectClean: it is gone).
            #expect(members.filter { ["AcquireNotify", "StartNotify", "StopNotify", "Disconnect"].contains($0) } == ["AcquireNotify", "Disconnect"])
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
            try #expect(await sim.calls().notifyCalls == ["AcquireNotify reply"])
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
            #expect(error.removing("message") == ["code": "timed_out", "exit_status": 124, "retryable": false, "operation": "notifications",
                                                  "address": "C0:FF:EE:00:00:04", "service": "180f", "characteristic": "2a19",
                                                  "dbus_error": .null])
            #expect(error["message"] == "timed out waiting for notifications of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:04")
            try #expect(await sim.calls().notifyCalls == ["AcquireNotify reply"])
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
            try #expect(await sim.calls().notifyCalls == [])
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
}
