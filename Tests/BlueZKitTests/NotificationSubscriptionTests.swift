import Foundation
import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// `Device.withNotificationSubscription` against the simulator: values in order, tagged with
/// their link, across forced link losses (DropLink keeps the StartNotify session as
/// bluetoothd 5.66 does; `remove` takes the device object too), the stream's end without a
/// policy, the policy's attempts and deadline, and nothing left behind.
@Suite struct NotificationSubscriptionTests {
    static let gattBattery = BluetoothAddress("C0:FF:EE:00:00:04")!

    /// Everything the subscription's stream delivered, in order, and how it ended.
    final class Recorder: Sendable {
        private let state = Lock<(events: [SubscriptionEvent], end: (any Error)?, ended: Bool)>(([], nil, false))

        func record(_ subscription: NotificationSubscription) async {
            do {
                for try await event in subscription.events { state.withLock { $0.events.append(event) } }
                state.withLock { $0.ended = true }
            } catch {
                state.withLock { $0.end = error; $0.ended = true }
            }
        }

        var events: [SubscriptionEvent] { state.withLock { $0.events } }
        var values: [NotifiedValue] { events.compactMap { if case .value(let v) = $0 { v } else { nil } } }
        var others: [SubscriptionEvent] { events.filter { if case .value = $0 { false } else { true } } }
        var end: (any Error)? { state.withLock { $0.end } }
        var ended: Bool { state.withLock { $0.ended } }

        /// Polls (20 ms) until `condition` holds on what was recorded, or `limit` passes.
        func wait(within limit: Duration = .seconds(15), until condition: (Recorder) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + limit
            while !condition(self) {
                if ContinuousClock.now >= deadline { return false }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return true
        }
    }

    /// Value i of a burst: i as 4 bytes big-endian.
    static func value(_ i: Int) -> [UInt8] { [UInt8(i >> 24 & 0xFF), UInt8(i >> 16 & 0xFF), UInt8(i >> 8 & 0xFF), UInt8(i & 0xFF)] }

    static func batteryLevel(_ connected: ConnectedDevice) async throws -> GATTCharacteristic {
        try connected.characteristic(.batteryLevel, in: try await connected.service(.batteryService, timeout: .seconds(10)))
    }

    /// blectl's backoff (0.2 s to 2 s), a minute to reconnect.
    static func fastPolicy() -> ReconnectPolicy {
        ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(2), deadline: .now + .seconds(60))
    }

    @Test func theBackoffDoublesFromTheInitialDelayUpToTheMaximum() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(2), deadline: .now)
        #expect((1...7).map(policy.delay(beforeAttempt:)) == [
            .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600), .seconds(2), .seconds(2), .seconds(2),
        ])
        #expect(ReconnectPolicy(initialDelay: .seconds(3), maximumDelay: .seconds(1), deadline: .now).delay(beforeAttempt: 4) == .seconds(3))
    }

    @Test func aBurstOfTenThousandIsStreamedOnceEachInOrder() async throws {
        // withNotificationStream, the stream under blectl's other commands, and the
        // subscription: 10,000 notifications back to back right after the StartNotify reply.
        try await Simulator.with(faults: ["notify_burst": "10000", "notify_burst_char": "2a19", "disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
            let streamed: [[UInt8]] = try await device.withConnection(timeout: .seconds(20)) { connected in
                try await connected.withNotificationStream(try await Self.batteryLevel(connected), setupTimeout: .seconds(10)) { values in
                    var got: [[UInt8]] = []
                    for try await value in values {
                        got.append(value)
                        if got.count == 10_000 { break }
                    }
                    return got
                }
            }
            let streamedInOrder = streamed == (1...10_000).map(Self.value)
            #expect(streamedInOrder, "withNotificationStream: \(streamed.count) values, first \(streamed.prefix(3)), last \(streamed.suffix(3))")

            let recorder = Recorder()
            try await device.withNotificationSubscription(timeout: .seconds(20), characteristic: Self.batteryLevel) { subscription in
                let recording = Task { await recorder.record(subscription) }
                _ = await recorder.wait { $0.values.count >= 10_000 }
                try await Task.sleep(for: .milliseconds(200))     // a duplicate would show up here
                recording.cancel()
            }
            let values = recorder.values
            let subscribedInOrder = values.map(\.bytes) == (1...10_000).map(Self.value)
            #expect(subscribedInOrder, "subscription: \(values.count) values")
            #expect(values.allSatisfy { $0.connection == 1 })
            #expect(recorder.others == [])
            #expect(session.watcherCount == 0)
            let left = try await sim.leftovers()
            #expect(left == [])
        }
    }

    @Test func aSubscriptionKeepsGoingAcrossThreeLinkLossesWithNothingLost() async throws {
        try await Simulator.with(faults: ["disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
            let recorder = Recorder()
            let address = Self.gattBattery.description
            let perBurst = 200
            try await device.withNotificationSubscription(timeout: .seconds(20), reconnect: Self.fastPolicy(),
                                                          characteristic: Self.batteryLevel) { subscription in
                #expect(subscription.characteristic.uuid == .batteryLevel)
                #expect(subscription.characteristic.service == .batteryService)
                let recording = Task { await recorder.record(subscription) }
                for link in 1...4 {
                    // Every value sent while the link is up must arrive: a burst, then the drop.
                    try await sim.notifyBurst(address: address, characteristic: "2a19", count: perBurst)
                    #expect(await recorder.wait { $0.values.count >= link * perBurst }, "link \(link): \(recorder.values.count) values")
                    guard link < 4 else { break }
                    try await sim.dropLink(address: address)
                    #expect(await recorder.wait { $0.others.contains(.restored(connection: link + 1)) }, "\(recorder.others)")
                }
                try await Task.sleep(for: .milliseconds(200))
                recording.cancel()
            }
            let values = recorder.values
            let expected = (1...4).flatMap { link in (1...perBurst).map { (link, Self.value($0)) } }
            let allInOrder = values.map(\.connection) == expected.map(\.0) && values.map(\.bytes) == expected.map(\.1)
            #expect(allInOrder, "\(values.count) values; connections \(Set(values.map(\.connection)).sorted())")
            #expect(recorder.others == [
                .linkLost(connection: 1), .restored(connection: 2),
                .linkLost(connection: 2), .restored(connection: 3),
                .linkLost(connection: 3), .restored(connection: 4),
            ])
            // One StartNotify per link, each restored session answered at last (InProgress while
            // the simulator re-enables the kept session); StopNotify once at the end.
            let calls = try await sim.calls().filter { $0.interface == "org.bluez.GattCharacteristic1" }
            #expect(calls.filter { $0.member == "StartNotify" && $0.outcome == "reply" }.count == 4)
            #expect(calls.filter { $0.member == "StartNotify" }.allSatisfy { ["reply", "error:org.bluez.Error.InProgress"].contains($0.outcome) })
            #expect(calls.filter { $0.member == "StopNotify" }.map(\.outcome) == ["reply"])
            #expect(session.watcherCount == 0)
            let left = try await sim.leftovers()
            #expect(left == [])
        }
    }

    @Test func aRemovedDeviceIsFoundAgainAndSubscribedAnew() async throws {
        try await Simulator.with(faults: ["disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
            let recorder = Recorder()
            let address = Self.gattBattery.description
            try await device.withNotificationSubscription(timeout: .seconds(20), reconnect: Self.fastPolicy(),
                                                          characteristic: Self.batteryLevel) { subscription in
                let recording = Task { await recorder.record(subscription) }
                try await sim.notifyBurst(address: address, characteristic: "2a19", count: 50)
                #expect(await recorder.wait { $0.values.count >= 50 })
                try await sim.dropLink(address: address, remove: true)
                #expect(await recorder.wait { $0.others.contains(.restored(connection: 2)) }, "\(recorder.others)")
                try await sim.notifyBurst(address: address, characteristic: "2a19", count: 50)
                #expect(await recorder.wait { $0.values.count >= 100 })
                recording.cancel()
            }
            let values = recorder.values
            #expect(values.map(\.bytes) == (1...50).map(Self.value) + (1...50).map(Self.value))
            #expect(values.map(\.connection) == Array(repeating: 1, count: 50) + Array(repeating: 2, count: 50))
            #expect(recorder.others == [.linkLost(connection: 1), .restored(connection: 2)])
            // The removed device's session went with it: the new object got a StartNotify of its
            // own (answered at once), and discovery ran to find it again and was stopped.
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "StartNotify" }.map(\.outcome) == ["reply", "reply"])
            #expect(calls.contains { $0.member == "StartDiscovery" })
            let left = try await sim.leftovers()
            #expect(left == [])
            #expect(session.watcherCount == 0)
        }
    }

    @Test func withoutAPolicyTheStreamEndsDisconnectedAfterTheValuesAndStopNotifyIsSent() async throws {
        try await Simulator.with(faults: ["disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
            let recorder = Recorder()
            let address = Self.gattBattery.description
            await #expect(throws: BLEError.disconnected(BLEOperation(.notifications, address: Self.gattBattery,
                                                                     service: .batteryService, characteristic: .batteryLevel))) {
                try await device.withNotificationSubscription(timeout: .seconds(20), characteristic: Self.batteryLevel) { subscription in
                    let recording = Task { await recorder.record(subscription) }
                    try await sim.notifyBurst(address: address, characteristic: "2a19", count: 300)
                    _ = await recorder.wait { $0.values.count >= 300 }
                    try await sim.dropLink(address: address)
                    await recording.value
                    if let end = recorder.end { throw end }
                }
            }
            #expect(recorder.values.map(\.bytes) == (1...300).map(Self.value))
            #expect(recorder.others == [.linkLost(connection: 1)])
            // bluetoothd keeps the session over the loss: StopNotify ends it, link down or not.
            let calls = try await sim.calls().filter { $0.interface == "org.bluez.GattCharacteristic1" }
            #expect(calls.map(\.member) == ["StartNotify", "StopNotify"])
            #expect(calls.map(\.outcome) == ["reply", "reply"])
            #expect(try await sim.state().notifySessions.isEmpty)
            #expect(session.watcherCount == 0)
        }
    }

    @Test func failedAttemptsAreReportedWithTheirBackoffUntilTheDeadline() async throws {
        try await Simulator.with(faults: ["disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
            let recorder = Recorder()
            let address = Self.gattBattery.description
            // 15 s: room for more than one attempt even under ThreadSanitizer on a loaded machine (with
            // 6 s a single slow attempt could take it all, and end the stream with its own failure).
            let policy = ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(2), deadline: .now + .seconds(15))
            try await device.withNotificationSubscription(timeout: .seconds(20), reconnect: policy,
                                                          characteristic: Self.batteryLevel) { subscription in
                let recording = Task { await recorder.record(subscription) }
                try await sim.setFault("connect_fail", "le-connection-abort-by-local")
                try await sim.dropLink(address: address)
                await recording.value
            }
            // Each attempt's Connect failed; the stream ended at the deadline. (How many attempts
            // fit depends on the machine's load: each is checked, not their number.)
            let failures = recorder.others.dropFirst()
            #expect(recorder.others.first == .linkLost(connection: 1))
            #expect(failures.count >= 1, "\(recorder.others)")
            for (index, event) in failures.enumerated() {
                guard case .reconnectFailed(let attempt, let error, let retryIn) = event else {
                    Issue.record("not a failed attempt: \(event)")
                    continue
                }
                #expect(attempt == index + 1)
                #expect(retryIn == policy.delay(beforeAttempt: attempt + 1))
                #expect(error == .failed(BLEOperation(.connect, address: Self.gattBattery), dbusError: "org.bluez.Error.Failed",
                                         message: "le-connection-abort-by-local"))
            }
            #expect(recorder.end as? BLEError == .timedOut(BLEOperation(.connect, address: Self.gattBattery)), "\(String(describing: recorder.end))")
            let left = try await sim.leftovers()
            #expect(left == [])
            #expect(session.watcherCount == 0)
        }
    }

    @Test func bluetoothGoingAwayEndsTheSubscriptionEvenWithAPolicy() async throws {
        try await Simulator.with(faults: ["disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
            let recorder = Recorder()
            do {
                try await device.withNotificationSubscription(timeout: .seconds(20), reconnect: Self.fastPolicy(),
                                                              characteristic: Self.batteryLevel) { subscription in
                    let recording = Task { await recorder.record(subscription) }
                    try await sim.setFault("adapter_powered_off", "1")
                    await recording.value
                    if let end = recorder.end { throw end }
                }
                Issue.record("the subscription ended without an error")
            } catch BLEError.unavailable(let why, _, _) {
                // Powered off as the adapter says, or BlueZ's NotReady to the reconnection's Connect.
                #expect([.poweredOff("hci0"), .notReady].contains(why), "\(why)")
            }
            #expect(recorder.others.first == .linkLost(connection: 1))
            #expect(!recorder.others.contains { if case .restored = $0 { true } else { false } })
            #expect(session.watcherCount == 0)
        }
    }
}
