import Foundation
import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// bluetoothd "blinks": it leaves the bus and is back before the session reads again, so one
/// batch holds NameOwnerChanged(old -> ""), NameOwnerChanged("" -> new) and the new
/// bluetoothd's InterfacesAdded. Taken in order, that is: everything gone, then everything
/// back. The session must end with a full cache and bluetoothd available.
///
/// "One batch" is made certain by keeping the session's connection queue busy (every read
/// of the socket and every dispatch runs there) while the simulator blinks: everything is
/// waiting in the socket when the queue is free again, as for a session busy with other work.
/// The checks that follow wait for a barrier (round trips to bluetoothd), never a pause: the
/// queue stays busy after the blink, and a pause would check the cache before the blink.
@Suite struct BluezBlinkTests {
    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!

    /// bluetoothd's Peer.Ping: answered on the simulator's org.bluez connection, so its reply
    /// comes after everything the simulator sent on that connection before it.
    static let ping = MethodCall(destination: BlueZ.service, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")

    /// The simulator blinks while the session's connection queue is held; the queue is freed
    /// once the bus daemon has routed the blink's messages (to us as to everyone: a Ping of
    /// bluetoothd from another connection has come back), and stays busy 500 ms more, as a
    /// session on a loaded machine would.
    static func blinkInOneBatch(_ sim: Simulator, _ session: Session) async throws {
        let witness = try await BusConnection.connect(to: sim.address)
        defer { witness.close() }
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        session.connection.queue.async {
            held.signal()
            release.wait()
            usleep(500_000)
        }
        held.wait()
        defer { release.signal() }
        try await sim.blink()             // returns once the simulator sent the blink's messages
        _ = try await witness.call(Self.ping, timeout: .seconds(30))
    }

    /// A barrier, not a pause: the session has applied the blink and the reload it started.
    /// The first Ping's reply follows the blink's messages on bluetoothd's connection, and our
    /// connection hands the signals to the session before the reply; the session sent its
    /// GetManagedObjects (the reload) while handling them, so before the second Ping, which
    /// bluetoothd answers after it.
    static func blinkApplied(_ session: Session) async throws {
        for _ in 0..<2 { _ = try await session.connection.call(Self.ping, timeout: .seconds(30)) }
    }

    /// The object paths under the adapter, and whether the adapter is there and powered.
    static func snapshot(_ session: Session, _ adapter: Adapter) -> (adapter: Bool, devices: Set<String>, gatt: Set<String>) {
        session.withCache { cache in
            let adapterThere = cache.property("Powered", of: adapter.path, on: BlueZ.adapterInterface)?.bool == true
            let devices = Set(cache.paths(with: BlueZ.deviceInterface, under: adapter.path).map(\.description))
            let gatt = Set([BlueZ.gattServiceInterface, BlueZ.gattCharacteristicInterface, BlueZ.gattDescriptorInterface]
                .flatMap { cache.paths(with: $0, under: adapter.path) }.map(\.description))
            return (adapterThere, devices, gatt)
        }
    }

    @Test func aBlinkInOneBatchLeavesAFullCacheAndBluezAvailable() async throws {
        let sim = try await Simulator.start(faults: ["disconnect_delay_ms": "100"])
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.probe, on: adapter, timeout: .seconds(20))
        let after: [UInt8] = try await device.withConnection(timeout: .seconds(20)) { connected in
            let battery = try await connected.service(.batteryService, timeout: .seconds(10))
            let level = try connected.characteristic(.batteryLevel, in: battery)
            #expect(try await connected.read(level, timeout: .seconds(30)) == [87])
            let before = Self.snapshot(session, adapter)
            let servicesBefore = connected.services
            #expect(before.adapter && before.devices.contains(device.path.description) && !before.gatt.isEmpty)

            try await Self.blinkInOneBatch(sim, session)
            #expect(try await sim.state().blinks == 1)
            try await Self.blinkApplied(session)

            // Everything bluetoothd re-announced is in the cache again, nothing more or less.
            let now = Self.snapshot(session, adapter)
            #expect(now.adapter, "adapter gone from the cache after the blink")
            #expect(now.devices == before.devices)
            #expect(now.gatt == before.gatt)
            #expect(connected.services == servicesBefore)
            #expect(adapter.knownDevices.map(\.address).contains(Self.probe))
            // Not "unavailable": the adapter is found and a GATT operation works.
            #expect(throws: Never.self) { try Adapter.ready(in: session, named: nil) }
            return try await connected.read(level, timeout: .seconds(30))
        }
        #expect(after == [87])
        #expect(session.watcherCount == 0)
        let left = try await sim.leftovers()
        #expect(left == [])
    }

    @Test func aBlinkBeforeAnyOperationLeavesTheSessionUsable() async throws {
        // The blink comes while the session is idle; then a whole connect + read.
        let sim = try await Simulator.start(faults: ["disconnect_delay_ms": "100", "preconnected": "C0:FF:EE:00:00:04"])
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let before = Self.snapshot(session, adapter)
        try await Self.blinkInOneBatch(sim, session)
        try await Self.blinkApplied(session)
        let now = Self.snapshot(session, adapter)
        #expect(now.adapter && now.devices == before.devices && now.gatt == before.gatt,
                "before: \(before), after: \(now)")
        let ready = try Adapter.ready(in: session, named: nil)
        let gattBattery = try await Device.find(BluetoothAddress("C0:FF:EE:00:00:04")!, on: ready, timeout: .seconds(10))
        let value = try await gattBattery.withConnection(timeout: .seconds(10)) { connected in
            let battery = try await connected.service(.batteryService, timeout: .seconds(30))
            return try await connected.read(try connected.characteristic(.batteryLevel, in: battery), timeout: .seconds(30))
        }
        #expect(value == [55])
    }
}
