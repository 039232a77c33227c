// `blectl write ADDRESS CHARACTERISTIC --without-response --file PATH|-` against the
// simulator's echo device (C0:FF:EE:00:00:08, switch echo_device): the simulator records
// what its sink received (bytes, packets, CRC-32, the largest packet) and how often it found
// the acquired socket full; the tests compare that with the file blectl was given. Here the
// data path (AcquireWrite, the MTU, the WriteValue fallback, standard input, an empty file);
// WriteFileTests+EndedEarly.swift: a stream cut short; WriteFileTests+Usage.swift: usage
// errors; WriteFileSignalSweepTests.swift: the signal sweep.

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

    /// `count` random bytes, eight per draw (a draw per byte took seconds of a cooperative
    /// thread in a debug build).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
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

    /// NotPermitted "Write acquired": another client holds the socket, and bluetoothd refuses
    /// WriteValue the same way while it does (5.66 src/gatt-client.c): busy, nothing written.
    /// (Before, blectl fell back to WriteValue, which only the simulator's fault let through.)
    @Test("AcquireWrite held by another client: 5 busy, no WriteValue")
    func heldByAnotherClient() async throws {
        let path = try Self.file(Self.randomBytes(1000))
        defer { unlink(path) }
        try await Sim.with(faults: ["echo_device": "1", "acquire_write_refused": "NotPermitted"]) { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path])
            #expect(run.status == 5, "\(run)")
            #expect(run.stdout == "")
            #expect(run.jsonError()?["code"] == "busy")
            #expect(run.jsonError()?["message"]?.string?.hasSuffix("Write acquired (another client holds it; bluetoothd allows one at a time)") == true,
                    "\(run.stderr)")
            try #expect(await sim.calls().filter { $0.member == "WriteValue" }.isEmpty)
            try #expect(await Self.leftovers(sim) == [])
        }
    }

    @Test("AcquireWrite refused: WriteValue type command, acquired false", arguments: ["NotSupported"])
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
