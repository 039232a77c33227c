// Discovery on the newer bluetoothd: an unfiltered discovery drops devices that do not
// advertise as discoverable, and from 5.67 a filter of only Transport (the adapter's scan
// type) and DuplicateData false counts as unfiltered; 5.87 crashes when a discovery filter
// with UUIDs meets an advertisement listing service UUIDs (bluez#2282). First that the
// simulator shows both faults to a client that asks as blectl used to, then that
// withDiscovery finds the hidden device and survives a service filter.

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite struct FilteredDiscoveryTests {
    static let hidden = BluetoothAddress("C0:FF:EE:00:00:0A")!
    static let probe = "C0:FF:EE:00:00:01"
    static let newerBlueZ = ["le_only_adapter": "true", "empty_filter_is_regular": "true", "hidden_device": "true",
                             "uuid_filter_crash": "true"]

    /// Runs `body` with a simulated bluetoothd 5.87 on an LE-only adapter (``newerBlueZ``), a
    /// session on it and its adapter.
    static func onNewerBlueZ(_ body: (Simulator, Session, Adapter) async throws -> Void) async throws {
        let sim = try await Simulator.start(faults: newerBlueZ)
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        try await body(sim, session, try Adapter.ready(in: session, named: nil))
    }

    /// Starts a discovery with `filter` as the raw SetDiscoveryFilter argument.
    static func startDiscovery(_ session: Session, _ adapter: Adapter, filter: [String: DBusValue]) async throws {
        let operation = BLEOperation(.discovery)
        _ = try await session.call(BlueZ.call(adapter.path, BlueZ.adapterInterface, "SetDiscoveryFilter", [.stringVariantDictionary(filter)]),
                                   operation: operation, timeout: .seconds(10))
        _ = try await session.call(BlueZ.call(adapter.path, BlueZ.adapterInterface, "StartDiscovery"), operation: operation, timeout: .seconds(10))
    }

    /// The addresses `adapter.withDiscovery(filter:)` reports until it has reported all of
    /// `wanted`, or 10 seconds have passed.
    static func addresses(heardBy adapter: Adapter, filter: DiscoveryFilter, untilAll wanted: Set<String>) async throws -> Set<String> {
        let heard = Lock(Set<String>())
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await adapter.withDiscovery(filter: filter, setupTimeout: .seconds(10)) { stream in
                    for try await batch in stream {
                        let all = heard.withLock { heard in
                            heard.formUnion(batch.map(\.address.description))
                            return heard.isSuperset(of: wanted)
                        }
                        if all { return }
                    }
                }
            }
            group.addTask { try await Task.sleep(for: .seconds(10)) }
            try await group.next()
            group.cancelAll()
        }
        return heard.withLock { $0 }
    }

    @Test func anLEDiscoveryWithOnlyTransportMissesADeviceThatIsNotDiscoverable() async throws {
        try await Self.onNewerBlueZ { sim, session, adapter in
            try await Self.startDiscovery(session, adapter, filter: ["Transport": .string("le"), "DuplicateData": .boolean(false)])
            // The simulator reports every advertiser in one pass: once the probe is there, the pass is done.
            #expect(try await eventually { try await sim.state().devices.contains(Self.probe) })
            let devices = try await sim.state().devices
            #expect(!devices.contains(Self.hidden.description), "\(devices)")
            #expect(!devices.contains("6F:12:8B:DE:02:9A"), "advertising flags 0x00: \(devices)")
            #expect(devices.contains("5E:3A:91:0C:44:21"), "advertising flags 0x1a (LE General Discoverable): \(devices)")
        }
    }

    @Test func withDiscoveryHearsADeviceThatIsNotDiscoverable() async throws {
        try await Self.onNewerBlueZ { sim, session, adapter in
            let heard = try await Self.addresses(heardBy: adapter, filter: DiscoveryFilter(),
                                                 untilAll: [Self.hidden.description, "6F:12:8B:DE:02:9A", Self.probe])
            #expect(heard.isSuperset(of: [Self.hidden.description, "6F:12:8B:DE:02:9A", Self.probe]), "\(heard)")
            let filters = try await sim.calls().filter { $0.member == "SetDiscoveryFilter" }.compactMap(\.filter)
            #expect(filters.count == 1 && filters.first?["RSSI"] == .number(-127), "\(filters)")
            let found = try await Device.find(Self.hidden, on: adapter, timeout: .seconds(10))
            #expect(found.address == Self.hidden)
        }
    }

    @Test func aUUIDsFilterCrashesTheSimulated587() async throws {
        try await Self.onNewerBlueZ { sim, session, adapter in
            try await Self.startDiscovery(session, adapter, filter: ["Transport": .string("le"), "DuplicateData": .boolean(false),
                                                                     "UUIDs": .stringArray(["0000180f-0000-1000-8000-00805f9b34fb"])])
            #expect(try await eventually { try !sim.state().bluezRunning }, "bluetoothd did not crash")
        }
    }

    @Test func aServiceFilterIsCheckedHereAndNeverSentAsUUIDs() async throws {
        try await Self.onNewerBlueZ { sim, session, adapter in
            let wanted: Set<String> = [Self.probe, "C0:FF:EE:00:00:04", Self.hidden.description]
            let heard = try await Self.addresses(heardBy: adapter, filter: DiscoveryFilter(uuids: [.batteryService]), untilAll: wanted)
            #expect(heard == wanted)
            #expect(try await sim.state().bluezRunning)
            let filters = try await sim.calls().filter { $0.member == "SetDiscoveryFilter" }.compactMap(\.filter)
            #expect(filters.count == 1 && filters.first?["UUIDs"] == nil, "\(filters)")
        }
    }
}
