// `blectl notify` when the link is lost: 4 without --reconnect (the socket gone with it);
// with --reconnect, reconnected across forced drops with nothing lost, found again after
// the device object went away, or each failed attempt reported until the timeout.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension NotifyTests {
    @Test("a lost link without --reconnect: 4 after the values received; the acquired socket gone with the link")
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
            #expect(error.removing("message") == ["code": "disconnected", "exit_status": 4, "retryable": true, "operation": "notifications",
                                                  "address": "C0:FF:EE:00:00:04", "service": "180f", "characteristic": "2a19",
                                                  "dbus_error": .null])
            // bluetoothd shuts an acquired socket on a link loss: nothing to stop. The link
            // itself is gone: nothing to disconnect.
            try #expect(await sim.calls().notifyCalls == ["AcquireNotify reply"])
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
                // The first line with link + 1 is its reconnection (its loss comes later).
                #expect(await process.stderrContains("\"connection\":\(link + 1)}"),
                        "no reconnection \(link + 1): \(process.currentStderr)")
            }
            let result = try await process.finish()
            let run = Run(arguments: ["notify"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 0, "\(run.status) \(run.stderr)")
            Self.expectRecords(run, values: (1...4).flatMap { _ in (1...perLink).map(Self.hex) },
                               connections: (1...4).flatMap { Array(repeating: $0, count: perLink) }, from: started, to: Date())
            let address = "\"address\":\"C0:FF:EE:00:00:04\""
            #expect(Self.withoutEventTimes(run.stderr) == [
                "{\"event\":\"link_lost\",\(address),\"connection\":1}",
                "{\"event\":\"reconnected\",\(address),\"connection\":2}",
                "{\"event\":\"link_lost\",\(address),\"connection\":2}",
                "{\"event\":\"reconnected\",\(address),\"connection\":3}",
                "{\"event\":\"link_lost\",\(address),\"connection\":3}",
                "{\"event\":\"reconnected\",\(address),\"connection\":4}",
            ])
            // Connected four times; AcquireNotify again on each link (bluetoothd shuts the socket
            // on a link loss); nothing to stop at the end.
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.map(\.outcome) == Array(repeating: "reply", count: 4))
            #expect(calls.notifyCalls == Array(repeating: "AcquireNotify reply", count: 4))
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
            let events = Self.withoutEventTimes(run.stderr).compactMap { J.parse($0) }
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
            // The socket went with the link; nothing else was asked.
            try #expect(await sim.calls().notifyCalls == ["AcquireNotify reply"])
            try await sim.expectClean()
        }
    }

    @Test("--reconnect, the adapter removed: 69 (unavailable) at once, not the timeout's 0 after attempts that cannot work")
    func adapterRemovedWhileReconnecting() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--reconnect", "--timeout", "120"])
            try #require(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started: \(process.currentStderr)")
            // Another client's read makes the adapter go away (USB unplugged): the link drops.
            try await sim.setFault("remove_adapter_on", "ReadValue")
            _ = await sim.blectl(["read", World.gattBattery, "2a19"])
            let result = try await process.finish(timeout: .seconds(60))
            // Before, every attempt failed (discovery: UnknownObject /org/bluez/hci0) and was
            // retried until the timeout, which ended the command with 0.
            #expect(!result.timedOut, "still reconnecting: \(result.stderr)")
            #expect(result.status == 69, "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n").compactMap { J.parse(String($0)) }
            #expect(lines.first?["event"] == "link_lost", "\(result.stderr)")
            #expect(lines.last?["error"]?["code"] == "unavailable", "\(result.stderr)")
            #expect(lines.last?["error"]?["message"]?.string?.hasPrefix("Bluetooth adapter hci0 was removed") == true, "\(result.stderr)")
            try await sim.expectClean()
        }
    }
}
