import Foundation
import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// AcquireWrite and AcquireNotify against the simulator's echo device (C0:FF:EE:00:00:08):
/// what goes into the socket arrives whole and in order (the simulator records bytes,
/// packets and a CRC-32 of what its sink received), the small socket the simulator drains
/// slowly makes writes wait (back-pressure), a refused AcquireWrite falls back to WriteValue,
/// a dropped link ends the writes and the notifications with `disconnected`, a cancelled
/// wait ends at once, and nothing stays acquired.
@Suite struct AcquireTests {
    static let echo = BluetoothAddress("C0:FF:EE:00:00:08")!
    static let echoService = BluetoothUUID("ec400001-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!
    static let sink = BluetoothUUID("ec400002-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!
    static let source = BluetoothUUID("ec400003-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!

    /// Connects to the echo device of a simulator started with `faults`, runs `body` with the
    /// sink and the source, disconnects; then checks nothing is left in the simulator.
    static func withEcho<T: Sendable>(
        faults: [String: String] = [:],
        _ body: (Simulator, ConnectedDevice, GATTCharacteristic, GATTCharacteristic) async throws -> T
    ) async throws -> T {
        let sim = try await Simulator.start(faults: ["echo_device": "1", "disconnect_delay_ms": "100"].merging(faults) { $1 })
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.echo, on: adapter, timeout: .seconds(20))
        let result = try await device.withConnection(timeout: .seconds(20)) { connected in
            let service = try await connected.service(Self.echoService, timeout: .seconds(10))
            return try await body(sim, connected, try connected.characteristic(Self.sink, in: service),
                                  try connected.characteristic(Self.source, in: service))
        }
        #expect(session.watcherCount == 0)
        return result
    }

    /// The simulator's record of what the echo sink received (state "echo", sim/README.md).
    struct EchoRecord: Sendable {
        var bytes = 0, packets = 0, crc32 = "", maxPacket = 0, minPacket: Int?, socketPackets = 0
        var writeValuePackets = 0, oversized = 0, socketFull = 0

        init(_ d: [String: Any]) {
            bytes = d["bytes"] as? Int ?? -1
            packets = d["packets"] as? Int ?? -1
            crc32 = d["crc32"] as? String ?? ""
            maxPacket = d["max_packet"] as? Int ?? -1
            minPacket = d["min_packet"] as? Int
            socketPackets = d["socket_packets"] as? Int ?? -1
            writeValuePackets = d["write_value_packets"] as? Int ?? -1
            oversized = d["oversized"] as? Int ?? -1
            socketFull = d["socket_full"] as? Int ?? -1
        }
    }

    /// The echo record and the kinds of the sockets clients hold ("write", "notify").
    static func echoState(_ sim: Simulator) async throws -> (echo: EchoRecord, acquired: [String]) {
        try await offThread {
            let state = try sim.stateDictionary()
            let acquired = (state["acquired"] as? [[String: Any]] ?? []).map { $0["kind"] as? String ?? "?" }
            return (EchoRecord(state["echo"] as? [String: Any] ?? [:]), acquired)
        }
    }

    /// Polls the simulator until its sink has `bytes` bytes (or 30 s passed: a hang guard); its record then.
    static func received(_ bytes: Int, by sim: Simulator) async throws -> EchoRecord {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let echo = try await echoState(sim).echo
            if echo.bytes == bytes || ContinuousClock.now >= deadline { return echo }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Polls until no socket is held (or 30 s passed: a hang guard); what is held then.
    static func released(by sim: Simulator) async throws -> [String] {
        let deadline = ContinuousClock.now + .seconds(30)
        while try await !echoState(sim).acquired.isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        return try await echoState(sim).acquired
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    @Test func valuesWrittenThroughTheSocketArriveWholeInOrderWithBackPressure() async throws {
        let data = Self.randomBytes(48 * 1024 + 100)
        let (mtu, waits, held, state, heldAfter) = try await Self.withEcho { sim, connected, sink, _ in
            let (mtu, waits, held) = try await connected.withAcquiredWrite(sink, timeout: .seconds(30)) { acquired in
                #expect(acquired.maximumValueLength == acquired.mtu - 3)
                for start in stride(from: 0, to: data.count, by: acquired.maximumValueLength) {
                    try await acquired.write(Array(data[start..<min(start + acquired.maximumValueLength, data.count)]), timeout: .seconds(10))
                }
                try await acquired.flush(timeout: .seconds(10))
                return (acquired.mtu, acquired.waitsForRoom, try await Self.echoState(sim).acquired)
            }
            let state = try await Self.received(data.count, by: sim)
            return (mtu, waits, held, state, try await Self.released(by: sim))
        }
        #expect(mtu == 247)
        #expect(held == ["write"])
        #expect(heldAfter.isEmpty, "the socket is still held: \(heldAfter)")
        // Every byte, in order, in packets of MTU - 3 but the last.
        #expect(state.bytes == data.count)
        #expect(state.packets == (data.count + 243) / 244)
        #expect(state.crc32 == CRC32.hex(data))
        #expect(state.maxPacket == 244)
        #expect(state.minPacket == data.count % 244)
        #expect(state.socketPackets == state.packets)
        #expect(state.oversized == 0)
        // The simulator drains 128 KiB/s from a ~1.7 KB socket: the writer waited for room,
        // and the simulator found its socket full.
        #expect(waits > 0, "never waited for POLLOUT")
        #expect(state.socketFull > 0, "the simulator never found its socket full: \(state)")
    }

    @Test func aRefusedAcquireWriteFallsBackToWriteValueCommand() async throws {
        let data = Self.randomBytes(3_000)
        let (acquired, refusal, state): (Bool, BLEError?, EchoRecord) = try await Self.withEcho(faults: ["acquire_write_refused": "NotSupported", "att_mtu": "100"]) { sim, connected, sink, _ in
            let (acquired, refusal): (Bool, BLEError?) = try await connected.withWritesWithoutResponse(sink, timeout: .seconds(30)) { writer in
                #expect(writer.mtu == 100)
                for start in stride(from: 0, to: data.count, by: writer.maximumValueLength) {
                    try await writer.write(Array(data[start..<min(start + writer.maximumValueLength, data.count)]), timeout: .seconds(30))
                }
                await #expect(throws: BLEError.self) { try await writer.write([UInt8](repeating: 0, count: 98), timeout: .seconds(30)) }
                try await writer.flush(timeout: .seconds(30))
                return (writer.isAcquired, writer.refusal)
            }
            return (acquired, refusal, try await Self.received(data.count, by: sim))
        }
        #expect(acquired == false)
        if case .notSupported? = refusal {} else { Issue.record("refusal \(String(describing: refusal))") }
        #expect(state.bytes == data.count)
        #expect(state.writeValuePackets == (data.count + 96) / 97)
        #expect(state.socketPackets == 0)
        #expect(state.crc32 == CRC32.hex(data))
    }

    @Test func aValueLongerThanMTUMinus3IsRefusedUnsent() async throws {
        try await Self.withEcho { sim, connected, sink, _ in
            try await connected.withAcquiredWrite(sink, timeout: .seconds(30)) { acquired in
                do {
                    try await acquired.write([UInt8](repeating: 1, count: 245), timeout: .seconds(30))
                    Issue.record("a 245-byte value was written at MTU 247")
                } catch BLEError.notSupported {}
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(try await Self.echoState(sim).echo.packets == 0)
        }
    }

    @Test func aDroppedLinkFailsTheWriteWithDisconnected() async throws {
        let data = Self.randomBytes(64 * 1024)
        let sim = try await Simulator.start(faults: ["echo_device": "1", "disconnect_delay_ms": "100", "echo_drop_link_after_bytes": "20000"])
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let device = try await Device.find(Self.echo, on: try Adapter.ready(in: session, named: nil), timeout: .seconds(20))
        var written = 0
        do {
            try await device.withConnection(timeout: .seconds(20)) { connected in
                let sink = try connected.characteristic(Self.sink, in: try await connected.service(Self.echoService, timeout: .seconds(10)))
                try await connected.withAcquiredWrite(sink, timeout: .seconds(30)) { acquired in
                    for start in stride(from: 0, to: data.count, by: 244) {
                        try await acquired.write(Array(data[start..<min(start + 244, data.count)]), timeout: .seconds(10))
                        written += 1
                    }
                }
            }
            Issue.record("all \(written) values written over a link that dropped")
        } catch BLEError.disconnected(let operation, _) {
            #expect(operation.kind == .write)
            #expect(operation.characteristic == Self.sink)
        }
        let state = try await sim.state()
        #expect(state.leftovers == [])
        #expect(try await Self.echoState(sim).acquired.isEmpty)
        #expect(try await Self.echoState(sim).echo.bytes >= 20000)
    }

    @Test func aCancelledWaitForRoomEndsAtOnceAndReleasesTheSocket() async throws {
        try await Self.withEcho(faults: ["acquire_write_drain_bps": "200"]) { sim, connected, sink, _ in
            let started = ContinuousClock.now
            let writer = Task {
                try await connected.withAcquiredWrite(sink, timeout: .seconds(30)) { acquired in
                    while true { try await acquired.write([UInt8](repeating: 7, count: 244), timeout: nil) }
                }
            }
            // Wait until the socket is full and the writer waits, then cancel it.
            while try await Self.echoState(sim).acquired.isEmpty && ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .milliseconds(200))
            writer.cancel()
            let result = await writer.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(try await Self.released(by: sim) == [], "the socket was not released")
        }
    }

    @Test func acquiredNotificationsArriveAsDatagramsAndEndWithTheLink() async throws {
        let values: [[UInt8]] = [[1], [2, 2], Array(repeating: 3, count: 244)]
        try await Self.withEcho(faults: ["echo_drop_link_after_bytes": "2000"]) { sim, connected, sink, source in
            let outcome: Result<[[UInt8]], any Error> = try await connected.withAcquiredNotifications(source, setupTimeout: .seconds(30)) { notifications in
                #expect(notifications.mtu == 247)
                #expect(try await Self.echoState(sim).acquired == ["notify"])
                // StartNotify is refused while notifications are acquired.
                await #expect(throws: BLEError.self) {
                    try await connected.withNotifications(source, setupTimeout: .seconds(30), onValue: { _ in }) {}
                }
                for value in values { try await connected.write(sink, value, type: .request, timeout: .seconds(30)) }
                var got: [[UInt8]] = []
                do {
                    for try await value in notifications.values {
                        got.append(value)
                        if got.count == values.count {
                            #expect(got == values)
                            // Then enough bytes for the simulator to drop the link (the writes
                            // after the drop fail: only the stream's end matters here).
                            for _ in 0..<10 { try? await connected.write(sink, Array(repeating: 9, count: 244), type: .request, timeout: .seconds(30)) }
                        }
                    }
                    return .success(got)
                } catch {
                    return .failure(error)
                }
            }
            guard case .failure(BLEError.disconnected(let operation, _)) = outcome else {
                Issue.record("the stream did not end with disconnected: \(outcome)")
                return
            }
            #expect(operation.kind == .notificationSetup)
        }
    }

    @Test func acquiredNotificationsStopWithTheBody() async throws {
        try await Self.withEcho { sim, connected, sink, source in
            let got: [[UInt8]] = try await connected.withAcquiredNotifications(source, setupTimeout: .seconds(30)) { notifications in
                try await sim.notifyBurst(address: Self.echo.description, characteristic: Self.source.description, count: 50)
                var got: [[UInt8]] = []
                for try await value in notifications.values {
                    got.append(value)
                    if got.count == 50 { break }
                }
                return got
            }
            let expected: [[UInt8]] = (1...50).map { (i: Int) -> [UInt8] in [0, 0, 0, UInt8(i)] }
            #expect(got == expected)
            #expect(try await Self.released(by: sim) == [])
            // Notifications can be started the usual way again.
            try await connected.withNotifications(source, setupTimeout: .seconds(30), onValue: { _ in }) {}
            _ = sink
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
        let value = crc ^ 0xFFFF_FFFF
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
