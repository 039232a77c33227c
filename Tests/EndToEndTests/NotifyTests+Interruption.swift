// `blectl notify` ended from outside: SIGINT/SIGTERM while listening or while reconnecting,
// and stdout closed by its reader (the acquired socket closed, nothing left); and `scan --timeout inf`
// ended by SIGINT.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension NotifyTests {
    @Test("interrupted while listening: 130/143, the acquired socket closed, the lines printed whole, nothing left",
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
            #expect(calls.notifyCalls == ["AcquireNotify reply"], "\(calls.map(\.member))")
            #expect(calls.contains { $0.member == "Disconnect" })
        }
    }

    @Test("interrupted while reconnecting: the pending Connect cancelled, nothing left")
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
            #expect(result.stderr.hasSuffix("}\n"))
            #expect(Self.withoutEventTimes(result.stderr) == ["{\"event\":\"link_lost\",\"address\":\"C0:FF:EE:00:00:04\",\"connection\":1}"])
            let calls = try await sim.calls()
            #expect(calls.notifyCalls == ["AcquireNotify reply"], "\(calls.map(\.member))")
            #expect(calls.filter { $0.interface == "org.bluez.Device1" }.map(\.member) == ["Connect", "Connect", "Disconnect"])
            try await sim.expectClean()
        }
    }

    @Test("notify | head -n 1: stopped at the next value, the socket closed, 141")
    func closedPipe() async throws {
        try await Sim.with(faults: ["notify_every_ms": "50", "notify_every_char": "2a19"]) { sim in
            let run = await ClosedPipeTests.pipeline(sim, ["notify", World.gattBattery, "2a19", "--timeout", "15"], into: "head -n 1")
            #expect(run.status == 141, "\(run)")
            #expect(run.stderr == "")
            #expect(J.parse(run.lines.first ?? "")?["seq"] == 1, "\(run)")
            try #expect(await sim.calls().notifyCalls == ["AcquireNotify reply"])
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
