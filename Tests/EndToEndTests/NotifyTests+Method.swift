// `blectl notify` prints only what the device notifies: AcquireNotify by default, so that a
// read by another client is not taken for a notification; StartNotify with --start-notify,
// or when AcquireNotify cannot be had (another client's StartNotify session, a characteristic
// that only indicates), said on stderr; a second client while one holds it: 5 (busy).

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension NotifyTests {
    /// Standard error's `notify_method` event, its time checked and taken out.
    static func methodEvent(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) -> J? {
        guard let line = stderr.split(separator: "\n").first, var event = J.parse(String(line)) else { return nil }
        #expect(event["time"]?.string.map(isRFC3339Milliseconds) == true, "\(line)", sourceLocation: sourceLocation)
        event = event.removing("time")
        return event
    }

    /// Notifies one value (00000001), waits for the line `seq`, then has another client read
    /// the characteristic (Battery Level 55, 0x37), then notifies one more: the values the
    /// notify run printed once interrupted.
    static func notifyAroundARead(_ sim: Sim, _ extra: [String]) async throws -> (values: [String], stderr: String) {
        let process = try await sim.launch(["notify", World.gattBattery, "2a19", "--timeout", "60"] + extra)
        try #require(try await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started: \(process.currentStderr)")
        try await sim.burst(World.gattBattery, "2a19", count: 1)
        #expect(await process.stdoutContains("\"seq\":1,"), "\(process.currentStderr)")
        let read = await sim.blectl(["read", World.gattBattery, "2a19"])
        #expect(read.status == 0, "\(read)")
        #expect(read.jsonObject()?["value"] == "37", "\(read)")
        // The read's answer is on the bus before its Value change: a session that takes the
        // change as a value has it before the next burst's value.
        try await sim.burst(World.gattBattery, "2a19", count: 1)
        #expect(await process.stdoutContains("\"value\":\"00000001\",", within: .seconds(30)))
        let deadline = ContinuousClock.now + .seconds(30)
        while process.currentStdout.split(separator: "\n").count < (extra.isEmpty ? 2 : 3), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        process.sendSignal(SIGINT)
        let result = try await process.finish()
        #expect(result.status == 130, "\(result.stderr)")
        let values = result.stdout.split(separator: "\n").compactMap { J.parse(String($0))?["value"]?.string }
        return (values, result.stderr)
    }

    @Test("another client's read is not a notification: AcquireNotify's values only; --start-notify shows the read too")
    func readByAnotherClientIsNotANotification() async throws {
        try await Sim.with { sim in
            let acquired = try await Self.notifyAroundARead(sim, [])
            // Before, notify used StartNotify and printed the read's 37 as a value between them.
            #expect(acquired.values == ["00000001", "00000001"])
            #expect(acquired.stderr == "")
            try await sim.expectClean()
            let calls = try await sim.calls()
            #expect(calls.notifyCalls == ["AcquireNotify reply"], "\(calls.map(\.member))")
        }
        try await Sim.with { sim in
            let started = try await Self.notifyAroundARead(sim, ["--start-notify"])
            #expect(started.values == ["00000001", "37", "00000001"])
            // Asked for: no notify_method event.
            #expect(started.stderr == "")
            try await sim.expectClean()
            let calls = try await sim.calls()
            #expect(calls.notifyCalls == ["StartNotify reply", "StopNotify reply"], "\(calls.map(\.member))")
        }
    }

    @Test("another client's StartNotify session: notify uses StartNotify too, says why first on stderr, and both get the values")
    func fallsBackBesideAStartNotifySession() async throws {
        try await Sim.with { sim in
            let first = try await sim.launch(["notify", World.gattBattery, "2a19", "--start-notify", "--timeout", "60"])
            try #require(try await sim.waitForState { !$0.notifySessions.isEmpty }, "the first never subscribed: \(first.currentStderr)")
            let second = try await sim.launch(["notify", World.gattBattery, "2a19", "--timeout", "60"])
            #expect(await second.stderrContains("notify_method"), "\(second.currentStderr)")
            try #require(try await sim.waitForState { $0.notifySessions.count == 2 }, "the second never subscribed: \(second.currentStderr)")
            try await sim.burst(World.gattBattery, "2a19", count: 2)
            #expect(await first.stdoutContains("\"seq\":2,"))
            #expect(await second.stdoutContains("\"seq\":2,"))
            second.sendSignal(SIGINT)
            first.sendSignal(SIGINT)
            let results = try await (second.finish(), first.finish())
            #expect(results.0.status == 130 && results.1.status == 130, "\(results.0.stderr) \(results.1.stderr)")
            #expect(Self.methodEvent(results.0.stderr) == ["event": "notify_method", "address": "C0:FF:EE:00:00:04", "method": "StartNotify",
                                                           "reason": "another client has a StartNotify session on it"], "\(results.0.stderr)")
            let calls = try await sim.calls()
            #expect(calls.notifyCalls.filter { $0.hasPrefix("AcquireNotify") } == ["AcquireNotify error:org.bluez.Error.InProgress"])
            try await sim.expectClean()
        }
    }

    @Test("a second client while one holds AcquireNotify: 5 busy, retryable, Notify acquired, whichever method it asks for")
    func secondClientWhileAcquired() async throws {
        try await Sim.with { sim in
            let holder = try await sim.launch(["notify", World.gattBattery, "2a19", "--timeout", "60"])
            try #require(try await sim.waitForState { $0.notifySessions.contains { $0.acquired } }, "never acquired: \(holder.currentStderr)")
            for extra in [[], ["--start-notify"]] {
                let run = await sim.blectl(["notify", World.gattBattery, "2a19", "--timeout", "20"] + extra)
                // Before, 77 not_permitted, with a hint to pair that did not apply.
                #expect(run.status == 5, "\(run)")
                #expect(run.stdout == "")
                let error = try #require(run.jsonError(), "\(run)")
                #expect(error["code"] == "busy")
                #expect(error["retryable"] == true)
                #expect(error["operation"] == "notification_setup")
                #expect(error["dbus_error"] == "org.bluez.Error.NotPermitted")
                #expect(error["message"]?.string == "busy: notification setup of characteristic 2a19 (Battery Level) in service 180f (Battery) on "
                        + "C0:FF:EE:00:00:04: Notify acquired (another client holds it; bluetoothd allows one at a time)", "\(run.stderr)")
            }
            // The holder still gets its values.
            try await sim.burst(World.gattBattery, "2a19", count: 1)
            #expect(await holder.stdoutContains("\"seq\":1,"))
            holder.sendSignal(SIGINT)
            #expect(try await holder.finish().status == 130)
            try await sim.expectClean()
        }
    }

    @Test("a characteristic that only indicates: StartNotify, said on stderr; the timeout reached is 0")
    func indicateOnlyUsesStartNotify() async throws {
        try await Sim.with { sim in
            // Service Changed (0x2A05 in 0x1801): indicate only.
            let run = await sim.blectl(["notify", World.gattBattery, "2a05", "--timeout", "3"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "")
            #expect(Self.methodEvent(run.stderr) == ["event": "notify_method", "address": "C0:FF:EE:00:00:04", "method": "StartNotify",
                                                     "reason": "the characteristic indicates but does not notify"], "\(run.stderr)")
            let calls = try await sim.calls()
            #expect(calls.notifyCalls == ["StartNotify reply", "StopNotify reply"])
            try await sim.expectClean()
        }
    }
}
