// `blectl write ADDRESS CHARACTERISTIC --without-response --file PATH|-` against the
// simulator's echo device (C0:FF:EE:00:00:08, switch echo_device): the simulator records
// what its sink received (bytes, packets, CRC-32, the largest packet) and how often it found
// the acquired socket full; the tests compare that with the file blectl was given.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("write --file")
struct WriteFileTests {
    static let echo = "C0:FF:EE:00:00:08"
    static let service = "ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let sink = "ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let recordKeys = ["address", "service", "characteristic", "bytes", "packets", "mtu", "acquired", "seconds"]

    /// The simulator's record of the echo sink (state "echo") and the sockets held.
    struct Echo: Sendable {
        var bytes: Int, packets: Int, crc32: String, maxPacket: Int, socketPackets: Int, writeValuePackets: Int
        var oversized: Int, socketFull: Int, acquired: [String]
    }

    static func echoState(_ sim: Sim) async throws -> Echo {
        let simulator = sim.simulator
        return try await offThread {
            let state = try simulator.stateDictionary()
            let e = state["echo"] as? [String: Any] ?? [:]
            let acquired = (state["acquired"] as? [[String: Any]] ?? []).map { $0["kind"] as? String ?? "?" }
            return Echo(bytes: e["bytes"] as? Int ?? -1, packets: e["packets"] as? Int ?? -1, crc32: e["crc32"] as? String ?? "",
                        maxPacket: e["max_packet"] as? Int ?? -1, socketPackets: e["socket_packets"] as? Int ?? -1,
                        writeValuePackets: e["write_value_packets"] as? Int ?? -1, oversized: e["oversized"] as? Int ?? -1,
                        socketFull: e["socket_full"] as? Int ?? -1, acquired: acquired)
        }
    }

    /// Polls until no socket is held and nothing else is left (30 s at most: a hang guard); what is left.
    /// Polls the echo state (every 20 ms, up to `timeout`) until `condition` holds; the last
    /// state read either way.
    static func waitForEcho(_ sim: Sim, timeout: Duration, until condition: (Echo) -> Bool) async throws -> Echo {
        let deadline = ContinuousClock.now + timeout
        var echo = try await echoState(sim)
        while !condition(echo) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            echo = try await echoState(sim)
        }
        return echo
    }

    static func leftovers(_ sim: Sim) async throws -> [String] {
        var left = try await sim.leftovers()
        let held = try await waitForEcho(sim, timeout: .seconds(30)) { $0.acquired.isEmpty }.acquired
        if !held.isEmpty { left.append("acquired sockets \(held)") }
        return left
    }

    /// `count` random bytes in a temporary file; its path.
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "blectl-write-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Checks the record on stdout: its keys in order and its values (seconds: a number).
    static func expectRecord(_ run: Run, bytes: Int, packets: Int, mtu: Int, acquired: Bool,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 0, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderr == "", sourceLocation: sourceLocation)
        guard let record = run.jsonObject(sourceLocation: sourceLocation) else { return }
        #expect(topLevelKeys(run.lines.first ?? "") == recordKeys, sourceLocation: sourceLocation)
        #expect(record.removing("seconds") == ["address": .string(echo), "service": .string(service), "characteristic": .string(sink),
                                               "bytes": .int(bytes), "packets": .int(packets), "mtu": .int(mtu), "acquired": .bool(acquired)],
                sourceLocation: sourceLocation)
        switch record["seconds"] {
        case .double(let s)?: #expect(s >= 0, sourceLocation: sourceLocation)
        case .int(let s)?: #expect(s >= 0, sourceLocation: sourceLocation)
        default: Issue.record("seconds is not a number: \(run)", sourceLocation: sourceLocation)
        }
    }

    @Test("256 KiB through AcquireWrite arrive byte-exact in packets of MTU - 3, with back-pressure")
    func acquiredStream() async throws {
        let data = Self.randomBytes(256 * 1024)
        let path = try Self.file(data)
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path], timeout: .seconds(60))
            Self.expectRecord(run, bytes: data.count, packets: (data.count + 243) / 244, mtu: 247, acquired: true)
            let echo = try await Self.echoState(sim)
            #expect(echo.bytes == data.count)
            #expect(echo.packets == (data.count + 243) / 244)
            #expect(echo.crc32 == CRC32.hex(data))
            #expect(echo.maxPacket == 244, "a packet longer than MTU - 3, or none of full size")
            #expect(echo.socketPackets == echo.packets)
            #expect(echo.oversized == 0)
            // The simulator drains 128 KiB/s from a socket of ~1.7 KB: blectl had to wait for room.
            #expect(echo.socketFull > 0, "the simulator never found the socket full")
            try #expect(await Self.leftovers(sim) == [])
        }
    }

    @Test("a smaller MTU: packets of MTU - 3 and the MTU in the record")
    func smallerMTU() async throws {
        let data = Self.randomBytes(10_000)
        let path = try Self.file(data)
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1", "att_mtu": "100", "acquire_write_drain_bps": "0"]) { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path])
            Self.expectRecord(run, bytes: data.count, packets: (data.count + 96) / 97, mtu: 100, acquired: true)
            let echo = try await Self.echoState(sim)
            #expect(echo.maxPacket == 97)
            #expect(echo.crc32 == CRC32.hex(data))
        }
    }

    @Test("an MTU of 517: packets of 512 bytes (bluetoothd reads 512 of a datagram), byte-exact")
    func largestMTU() async throws {
        // Found by the real-bluetoothd rig (realbluez test_write_file_in_vm): with an MTU of
        // 517, packets of 514 bytes lost their last 2 in bluetoothd's sock_read.
        let data = Self.randomBytes(10_000)
        let path = try Self.file(data)
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1", "att_mtu": "517", "acquire_write_drain_bps": "0"]) { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path])
            Self.expectRecord(run, bytes: data.count, packets: (data.count + 511) / 512, mtu: 517, acquired: true)
            let echo = try await Self.echoState(sim)
            #expect(echo.bytes == data.count)
            #expect(echo.packets == (data.count + 511) / 512)
            #expect(echo.maxPacket == 512)
            #expect(echo.crc32 == CRC32.hex(data))
            #expect(echo.oversized == 0)
        }
    }

    @Test("AcquireWrite refused: WriteValue type command, acquired false", arguments: ["NotSupported", "NotPermitted"])
    func fallback(refusal: String) async throws {
        let data = Self.randomBytes(12_345)
        let path = try Self.file(data)
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1", "acquire_write_refused": refusal]) { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path])
            Self.expectRecord(run, bytes: data.count, packets: (data.count + 243) / 244, mtu: 247, acquired: false)
            let echo = try await Self.echoState(sim)
            #expect(echo.bytes == data.count)
            #expect(echo.crc32 == CRC32.hex(data))
            #expect(echo.writeValuePackets == (data.count + 243) / 244)
            #expect(echo.socketPackets == 0)
            let writes = try await sim.calls().filter { $0.member == "WriteValue" }
            #expect(writes.count == (data.count + 243) / 244)
            #expect(writes.allSatisfy { $0.outcome == "reply" })
            try #expect(await Self.leftovers(sim) == [])
        }
    }

    @Test("standard input as -")
    func standardInput() async throws {
        let data = Self.randomBytes(100_000)
        try await Sim.with(faults: ["echo_device": "1", "acquire_write_drain_bps": "0"]) { sim in
            let simulator = sim.simulator
            let process = try await offThread {
                try simulator.launch(BlectlBinary.path, ["write", Self.echo, Self.sink, "--without-response", "--file", "-"], stdinPipe: true)
            }
            // Written in pieces that do not fall on packet boundaries, with pauses: blectl reads what comes.
            try await offThread {
                var offset = 0
                while offset < data.count {
                    let end = min(offset + 7_777, data.count)
                    process.writeStdin(bytes: Array(data[offset..<end]))
                    offset = end
                    usleep(2_000)
                }
                process.closeStdin()
            }
            let result = try await process.finish(timeout: .seconds(30))
            let run = Run(arguments: ["write", "--file", "-"], status: result.status, stdout: result.stdout, stderr: result.stderr)
            Self.expectRecord(run, bytes: data.count, packets: (data.count + 243) / 244, mtu: 247, acquired: true)
            let echo = try await Self.echoState(sim)
            #expect(echo.bytes == data.count)
            #expect(echo.crc32 == CRC32.hex(data))
            try #expect(await Self.leftovers(sim) == [])
        }
    }

    @Test("an empty input: nothing written, a record of 0 bytes")
    func emptyInput() async throws {
        let path = try Self.file([])
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path])
            Self.expectRecord(run, bytes: 0, packets: 0, mtu: 247, acquired: true)
            try #expect(await Self.echoState(sim).packets == 0)
        }
    }

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

    /// `--file -` with standard input closed (`<&-`): a usage error before anything goes on
    /// the bus (descriptor 0 was taken by blectl's own event loop and read as the input: 70).
    @Test("usage: --file - with standard input closed is 64, nothing sent on the bus")
    func closedStandardInput() async throws {
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let script = #"exec "$0" write "$1" "$2" --without-response --file - <&-"#
            let simulator = sim.simulator
            let r = try await offThread { simulator.run("/bin/bash", ["-c", script, BlectlBinary.path, Self.echo, Self.sink], timeout: .seconds(30)) }
            #expect(r.status == 64, "\(r)")
            #expect(r.stdout == "")
            #expect(r.stderr.hasPrefix("Error: Cannot read '--file -': standard input is closed\n"), "\(r.stderr)")
            try #expect(await sim.calls().isEmpty)
        }
    }

    /// Bad input: the plain usage error (as for every usage error), and nothing on the bus at
    /// all (it was a JSON error after GetManagedObjects).
    @Test("usage: a file that cannot be opened is 64, plain text, nothing sent on the bus")
    func unreadableFile() async throws {
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let directory = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
            for (path, reason) in [("/nonexistent/blectl-input", "No such file or directory"), (directory, "it is a directory")] {
                let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path])
                #expect(run.status == 64, "\(run)")
                #expect(run.stdout == "")
                #expect(run.stderr.hasPrefix("Error: Cannot read '--file' '\(path)': \(reason)\n"), "\(run)")
                #expect(run.stderr.contains("See 'blectl write --help' for more information."))
            }
            try #expect(await sim.calls().isEmpty)
        }
    }

    @Test("usage: --file needs --without-response")
    func needsWithoutResponse() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--file", "-"])
            #expect(run.status == 64)
            #expect(run.stdout == "")
            #expect(run.stderr.hasPrefix("Error: '--file' needs '--without-response'"))
            #expect(run.stderr.contains("See 'blectl write --help' for more information."))
        }
    }
}

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

/// CRC-32 as zlib computes it (the simulator's checksum).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func hex(_ bytes: [UInt8]) -> String {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        let digits = String(crc ^ 0xFFFF_FFFF, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
