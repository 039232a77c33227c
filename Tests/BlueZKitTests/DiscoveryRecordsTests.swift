// A scan with DuplicateData applies an RSSI or TxPower change to the device's record instead
// of reading the device again (Adapter.withDiscovery's records): every advertisement must
// still be exactly what the cache holds right after the event that made it.

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite struct DiscoveryRecordsTests {
    private static let device = FakeBlueZ.device

    private static let objects: FakeBlueZ.Objects = [
        FakeBlueZ.adapter: [BlueZ.adapterInterface: ["Address": .string("00:AA:01:00:00:01"), "Powered": .boolean(true),
                                                     "Discovering": .boolean(false)]],
        device: [BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:01"), "AddressType": .string("public"),
                                         "Adapter": .objectPath(FakeBlueZ.adapter), "Name": .string("A"),
                                         "Connected": .boolean(false), "RSSI": .int16(-50)]],
    ]

    private struct Seen: Equatable, Sendable, CustomStringConvertible {
        var rssi: Int?, txPower: Int?, name: String?, connected: Bool, companies: [UInt16]
        var description: String { "rssi \(rssi.map(String.init) ?? "-") tx \(txPower.map(String.init) ?? "-") \(name ?? "-") connected \(connected) \(companies)" }
        init(rssi: Int?, txPower: Int? = nil, name: String?, connected: Bool = false, companies: [UInt16] = []) {
            (self.rssi, self.txPower, self.name, self.connected, self.companies) = (rssi, txPower, name, connected, companies)
        }
        init(_ a: Advertisement) {
            self.init(rssi: a.rssi, txPower: a.txPower, name: a.name, connected: a.connected, companies: a.manufacturerData.keys.sorted())
        }
    }

    private static func changed(_ properties: [String: DBusValue], invalidated: [String] = []) -> Signal {
        FakeBlueZ.propertiesChanged(device, BlueZ.deviceInterface, properties, invalidated: invalidated)
    }

    /// Each change of what a record holds (Connected, which is not a sighting; Name;
    /// ManufacturerData; RSSI invalidated; the device removed and added again) is seen in the
    /// sightings after it, each with the RSSI and TxPower of its own signal; one batch or a
    /// signal at a time alike.
    @Test(arguments: [false, true])
    func everySightingIsTheCacheRightAfterItsSignal(oneBatch: Bool) async throws {
        let fake = try await FakeBlueZ.start(objects: Self.objects)
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let adapter = Adapter(session: session, path: FakeBlueZ.adapter)
        let signals: [Signal] = [
            Self.changed(["RSSI": .int16(-60)]),
            Self.changed(["Connected": .boolean(true)]),
            Self.changed(["RSSI": .int16(-61)]),
            Self.changed(["Name": .string("B")]),
            Self.changed(["RSSI": .int16(-62), "Paired": .boolean(true)]),
            Self.changed(["ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v",
                                                          [.init(.uint16(0x05F1), .variant(.bytes([1, 2])))])]),
            Self.changed(["RSSI": .int16(-63), "TxPower": .int16(4)]),
            Self.changed(["TxPower": .int16(5)], invalidated: ["RSSI"]),
            Self.changed(["RSSI": .int16(-64)]),
            FakeBlueZ.interfacesRemoved(Self.device, [BlueZ.deviceInterface]),
            FakeBlueZ.interfacesAdded(Self.device, [BlueZ.deviceInterface: [
                "Address": .string("C0:FF:EE:00:00:01"), "Adapter": .objectPath(FakeBlueZ.adapter), "Name": .string("C"), "RSSI": .int16(-70)]]),
            Self.changed(["RSSI": .int16(-71)]),
        ]
        let expected = [
            Seen(rssi: -60, name: "A"),
            Seen(rssi: -61, name: "A", connected: true),
            Seen(rssi: -61, name: "B", connected: true),
            Seen(rssi: -62, name: "B", connected: true),
            Seen(rssi: -62, name: "B", connected: true, companies: [0x05F1]),
            Seen(rssi: -63, txPower: 4, name: "B", connected: true, companies: [0x05F1]),
            Seen(rssi: nil, txPower: 5, name: "B", connected: true, companies: [0x05F1]),
            Seen(rssi: -64, txPower: 5, name: "B", connected: true, companies: [0x05F1]),
            Seen(rssi: -70, name: "C"),
            Seen(rssi: -71, name: "C"),
        ]
        let seen = try await adapter.withDiscovery(filter: DiscoveryFilter(duplicateData: true), setupTimeout: .seconds(30)) { stream in
            if oneBatch {
                try await fake.emit(signals)
            } else {
                for signal in signals { try await fake.emit([signal]) }
            }
            // A watchdog: too few sightings end the wait after 30 s (and the test fails).
            return try await withThrowingTaskGroup(of: [Seen]?.self) { group in
                group.addTask {
                    var seen: [Seen] = []
                    for try await batch in stream {
                        seen += batch.map(Seen.init)
                        if seen.count >= expected.count { break }
                    }
                    return seen
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(30))
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next()! ?? []
            }
        }
        #expect(seen == expected)
    }
}
