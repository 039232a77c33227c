import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

/// ``SessionEvent/changes(of:at:)``: a PropertiesChanged or an InterfacesAdded, typed by the
/// interface's table; the raw event case stays as it is.
@Suite struct PropertyChangesTests {
    static let device = FakeBlueZ.device

    @Test func aPropertiesChangedTyped() throws {
        let event = SessionEvent.changed(Self.device, interface: BlueZ.deviceInterface,
                                         changed: ["RSSI": .int16(-61), "Connected": .boolean(true), "AdvertisingFlags": .bytes([6])],
                                         invalidated: ["TxPower", "NotABlueZName"])
        let change = try #require(event.changes(of: DeviceProperties.self))
        #expect(change.path == Self.device)
        #expect(change.values.rssi == -61)
        #expect(change.values.connected == true)
        #expect(change.values.name == nil && change.values.txPower == nil)
        #expect(change.changed == ["RSSI", "Connected"])
        #expect(change.invalidated == ["TxPower"])
        // Another interface, or another object: nothing.
        #expect(event.changes(of: AdapterProperties.self) == nil)
        #expect(event.changes(of: DeviceProperties.self, at: FakeBlueZ.adapter) == nil)
        #expect(event.changes(of: DeviceProperties.self, at: Self.device) == change)
        // Folded into the record as it was: RSSI replaced, TxPower cleared, the rest kept.
        var record = DeviceProperties(["Name": .string("blesim Keys"), "RSSI": .int16(-80), "TxPower": .int16(-4)])
        change.fold(into: &record)
        #expect(record == DeviceProperties(["Name": .string("blesim Keys"), "RSSI": .int16(-61), "Connected": .boolean(true)]))
        #expect(SessionEvent.loaded.changes(of: DeviceProperties.self) == nil)
    }

    @Test func anInterfacesAddedTyped() throws {
        let event = SessionEvent.added(FakeBlueZ.characteristic, interfaces: [
            BlueZ.gattCharacteristicInterface: ["UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"), "Flags": .stringArray(["read", "notify"]),
                                                "MTU": .uint16(517), "Service": .objectPath(FakeBlueZ.service)],
        ])
        let added = try #require(event.changes(of: GATTCharacteristicProperties.self, at: FakeBlueZ.characteristic))
        #expect(added.values.uuid == BluetoothUUID("2a19"))
        #expect(added.values.flags == ["read", "notify"])
        #expect(added.values.mtu == 517)
        #expect(added.values.service == FakeBlueZ.service)
        #expect(added.changed == ["UUID", "Flags", "MTU", "Service"])
        #expect(added.invalidated.isEmpty)
        #expect(event.changes(of: GATTServiceProperties.self) == nil)
    }

    /// Over the bus, from a session's stream: a notification's value and an adapter's power,
    /// typed.
    @Test func eventsOfASessionTyped() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        var events = session.events().makeAsyncIterator()
        try await fake.emit([
            FakeBlueZ.notification([0x55, 0x01]),
            FakeBlueZ.propertiesChanged(FakeBlueZ.adapter, BlueZ.adapterInterface, ["Powered": .boolean(false)], invalidated: ["PowerState"]),
        ])
        var value: [UInt8]?
        var adapter: PropertyChanges<AdapterProperties>?
        while adapter == nil, let event = await events.next() {
            if let change = event.changes(of: GATTCharacteristicProperties.self) { value = change.values.value }
            adapter = event.changes(of: AdapterProperties.self, at: FakeBlueZ.adapter)
        }
        #expect(value == [0x55, 0x01])
        #expect(adapter?.values.powered == false)
        #expect(adapter?.changed == ["Powered"])
        #expect(adapter?.invalidated == ["PowerState"])
        // The cache has folded it; AdapterInfo's members are the record's, settable too.
        var info = try #require(session.withCache { cache in cache[FakeBlueZ.adapter, BlueZ.adapterInterface].map { AdapterInfo(path: FakeBlueZ.adapter, properties: $0) } })
        #expect(info.powered == false)
        info.powered = true
        #expect(info.properties.powered == true)
    }
}
