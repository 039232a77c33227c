import Foundation
import Synchronization
import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// Notifications faster than the session reads them: BlueZ's PropertiesChanged signals pile
/// up and arrive in batches. Each one carries its own value, and `withNotifications` must
/// deliver every one, once, in order (not the batch's last value once per signal).
@Suite struct NotificationBurstTests {
    static let gattBattery = BluetoothAddress("C0:FF:EE:00:00:04")!
    static let count = 1_000

    /// The values delivered to `onValue`, in delivery order.
    final class Delivered: Sendable {
        private let values = Mutex<[[UInt8]]>([])
        func append(_ value: [UInt8]) { values.withLock { $0.append(value) } }
        var all: [[UInt8]] { values.withLock { $0 } }

        /// Polls until `count` values came or `limit` passed; then waits `settle` more for
        /// any value beyond them (a duplicate would show up there).
        func wait(for count: Int, within limit: Duration, settle: Duration) async -> [[UInt8]] {
            let deadline = ContinuousClock.now + limit
            while all.count < count && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            try? await Task.sleep(for: settle)
            return all
        }
    }

    /// Value i as the simulator sends it: i as 4 bytes big-endian.
    static func value(_ i: Int) -> [UInt8] { [UInt8(i >> 24 & 0xFF), UInt8(i >> 16 & 0xFF), UInt8(i >> 8 & 0xFF), UInt8(i & 0xFF)] }

    /// What went wrong with `got` compared with 1...count, in a line.
    static func summary(_ got: [[UInt8]]) -> String {
        let numbers = got.map { $0.count == 4 ? Int($0[0]) << 24 | Int($0[1]) << 16 | Int($0[2]) << 8 | Int($0[3]) : -1 }
        let distinct = Set(numbers).count
        let firstWrong = numbers.indices.first { numbers[$0] != $0 + 1 }
        let around = firstWrong.map { Array(numbers[max(0, $0 - 2) ..< min(numbers.count, $0 + 3)]) } ?? []
        return "\(numbers.count) values delivered, \(distinct) distinct, \(numbers.count - distinct) duplicates; "
            + "first out of place at index \(firstWrong.map(String.init) ?? "-"): \(around)"
    }

    @Test func aBurstOfDistinctNotificationsIsDeliveredOnceEachInOrder() async throws {
        // 1,000 notifications of Battery Level 0x2A19, back to back, right after the StartNotify reply.
        let sim = try await Simulator.start(faults: ["notify_burst": String(Self.count), "notify_burst_char": "2a19",
                                               "disconnect_delay_ms": "100"])
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
        let delivered = Delivered()
        let got = try await device.withConnection(timeout: .seconds(20)) { connected in
            let battery = try await connected.service(.batteryService, timeout: .seconds(10))
            let level = try connected.characteristic(.batteryLevel, in: battery)
            return try await connected.withNotifications(level, setupTimeout: .seconds(10), onValue: { delivered.append($0) }) {
                await delivered.wait(for: Self.count, within: .seconds(15), settle: .milliseconds(300))
            }
        }
        // Compared as Bools: the arrays themselves would fill the failure report.
        let allDelivered = got.count == Self.count
        let onceEachInOrder = got == (1 ... Self.count).map(Self.value)
        #expect(allDelivered, "\(Self.summary(got))")
        #expect(onceEachInOrder, "\(Self.summary(got))")
        #expect(session.watcherCount == 0)
        let left = try await sim.leftovers()
        #expect(left == [])
    }

    @Test func aBurstOnRequestDuringAQuietSessionIsDeliveredOnceEachInOrder() async throws {
        // The same burst sent when asked (simctl burst), with notifications already on.
        let sim = try await Simulator.start(faults: ["disconnect_delay_ms": "100"])
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
        let delivered = Delivered()
        let got = try await device.withConnection(timeout: .seconds(20)) { connected in
            let battery = try await connected.service(.batteryService, timeout: .seconds(10))
            let level = try connected.characteristic(.batteryLevel, in: battery)
            return try await connected.withNotifications(level, setupTimeout: .seconds(10), onValue: { delivered.append($0) }) {
                try await sim.notifyBurst(address: Self.gattBattery.description, characteristic: "2a19", count: Self.count)
                return await delivered.wait(for: Self.count, within: .seconds(15), settle: .milliseconds(300))
            }
        }
        let onceEachInOrder = got == (1 ... Self.count).map(Self.value)
        #expect(onceEachInOrder, "\(Self.summary(got))")
        #expect(session.watcherCount == 0)
    }
}
