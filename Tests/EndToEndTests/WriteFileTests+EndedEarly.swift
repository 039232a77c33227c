// `blectl write --file` cut short: the link drops or the device changes its GATT database
// mid-stream, SIGINT while streaming or while standard input gives nothing, SIGTERM while
// waiting on a FIFO with no writer; nothing is left in the simulator.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension WriteFileTests {
    @Test("the link drops mid-stream: exit 4, nothing printed, nothing left")
    func linkDrop() async throws {
        let path = try Self.file(Self.randomBytes(256 * 1024))
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1", "echo_drop_link_after_bytes": "65536"]) { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path], timeout: .seconds(60))
            #expect(run.status == 4, "\(run)")
            #expect(run.stdout == "")
            let error = run.jsonError()
            #expect(error?["code"] == "disconnected")
            #expect(error?["operation"] == "write")
            #expect(error?["characteristic"] == .string(Self.sink))
            let echo = try await Self.echoState(sim)
            #expect(echo.bytes >= 65536 && echo.bytes < 256 * 1024)
            try #expect(await Self.leftovers(sim) == [])
        }
    }

    /// Runs `body` once `write --file` of 256 KiB streams to the echo sink (drained at
    /// 4,000 B/s, so it is still streaming a minute later).
    static func whileStreaming(_ body: (Sim, RunningProcess) async throws -> Void) async throws {
        let path = try file(randomBytes(256 * 1024))
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1", "acquire_write_drain_bps": "4000"]) { sim in
            let process = try await sim.launch(["write", echo, sink, "--without-response", "--file", path])
            let state = try await waitForEcho(sim, timeout: .seconds(20)) { !$0.acquired.isEmpty && $0.bytes > 0 }
            #expect(state.acquired == ["write"], "never streaming")
            try await body(sim, process)
        }
    }

    /// Found by this session's breaker: bluetoothd shuts the acquired socket when the
    /// characteristic's object leaves, and blectl took every hang-up for a lost link
    /// (exit 4 "disconnected", the link still up). Values still in the socket may or may not
    /// have reached the device: exit 1 outcome_unknown, as a pending write whose object leaves.
    @Test("the device changes its GATT database mid-stream, the link up: exit 1 outcome_unknown, nothing left")
    func serviceChangedMidStream() async throws {
        try await Self.whileStreaming { sim, process in
            let simulator = sim.simulator
            try await offThread { try simulator.serviceChanged(address: Self.echo, service: Self.service) }
            let result = try await process.finish()
            let run = Run(arguments: ["write"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout == "")
            let error = run.jsonError()
            #expect(error?["code"] == "outcome_unknown", "\(run.stderr)")
            #expect(error?["operation"] == "write")
            #expect(error?["characteristic"] == .string(Self.sink))
            #expect(error?["message"]?.string?.contains("changed its GATT database") == true, "\(run.stderr)")
            try #expect(await sim.calls().contains { $0.member == "Disconnect" })
            try #expect(await Self.leftovers(sim) == [])
        }
    }

    @Test("SIGINT mid-stream: 130 at once, the socket closed, the link taken down")
    func interruptedWhileStreaming() async throws {
        try await Self.whileStreaming { sim, process in
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.status == 130, "status \(result.status), stderr \(result.stderr)")
            #expect(result.stdout == "")
            #expect(result.stderr == "")
            try #expect(await Self.leftovers(sim) == [])
            try #expect(await sim.calls().contains { $0.member == "Disconnect" })
        }
    }

    @Test("SIGINT while standard input gives nothing: 130 at once, nothing left")
    func interruptedWhileReading() async throws {
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let simulator = sim.simulator
            let process = try await offThread {
                try simulator.launch(BlectlBinary.path, ["write", Self.echo, Self.sink, "--without-response", "--file", "-"], stdinPipe: true)
            }
            try #expect(await sim.waitForState(timeout: .seconds(20)) { !$0.connections.isEmpty }, "never connected")
            let held = try await Self.waitForEcho(sim, timeout: .seconds(10)) { !$0.acquired.isEmpty }.acquired
            #expect(held == ["write"])
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.status == 130, "status \(result.status), stderr \(result.stderr)")
            #expect(result.stdout == "")
            #expect(result.stderr == "")
            try #expect(await Self.leftovers(sim) == [])
            process.closeStdin()
        }
    }

    /// A FIFO nobody writes to: opening it must not wait for a writer (open(2) would block
    /// where neither a signal nor --timeout reaches it: SIGTERM was ignored); the stream waits
    /// for input in poll(2), and SIGTERM ends it at once with the link taken down.
    @Test("a FIFO with no writer: connected and waiting for input, SIGTERM is 143 at once, nothing left")
    func fifoWithoutWriter() async throws {
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let fifo = NSTemporaryDirectory() + "blectl-fifo-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            #expect(mkfifo(fifo, 0o600) == 0)
            defer { unlink(fifo) }
            let process = try await sim.launch(["write", Self.echo, Self.sink, "--without-response", "--file", fifo])
            let held = try await Self.waitForEcho(sim, timeout: .seconds(30)) { !$0.acquired.isEmpty }.acquired
            #expect(held == ["write"], "never reached the stream (blocked opening the FIFO?)")
            let taken = await process.signalAndWaitUntilTaken(SIGTERM)
            let result = try await process.finish(timeout: .seconds(30))
            #expect(taken && result.status == 143, "status \(result.status), stderr \(result.stderr)")
            #expect(result.stdout == "" && result.stderr == "", "\(result)")
            try #expect(await Self.leftovers(sim) == [])
        }
    }
}
