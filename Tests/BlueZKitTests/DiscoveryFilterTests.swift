import Testing
import DBusKit
@testable import BlueZKit

@Suite struct DiscoveryFilterTests {
    static func advertisement(name: String?, rssi: Int?, uuids: [String], address: String = "C0:FF:EE:00:00:01") -> Advertisement {
        var p: [String: DBusValue] = ["Address": .string(address), "UUIDs": .stringArray(uuids)]
        if let name { p["Name"] = .string(name) }
        if let rssi { p["RSSI"] = .int16(Int16(rssi)) }
        let path = "/org/bluez/hci0/dev_" + address.split(separator: ":").joined(separator: "_")
        return Advertisement(path: ObjectPath(path), properties: ObjectCache.Properties(p))!
    }

    @Test("SetDiscoveryFilter: LE, DuplicateData explicit, always an RSSI floor (a filtered discovery), never UUIDs")
    func setDiscoveryFilterArgument() {
        let plain = DiscoveryFilter().dbusValue.stringKeyedDictionary
        #expect(plain == ["Transport": .string("le"), "DuplicateData": .boolean(false), "RSSI": .int16(-127)])
        let full = DiscoveryFilter(uuids: [.batteryService], rssiMin: -70, names: ["probe"], duplicateData: true).dbusValue.stringKeyedDictionary
        #expect(full == ["Transport": .string("le"), "DuplicateData": .boolean(true), "RSSI": .int16(-70)])
    }

    @Test func clientSideChecksEveryKindOfFilter() {
        let filter = DiscoveryFilter(uuids: [.batteryService], rssiMin: -70, names: ["probe"])
        #expect(filter.matches(Self.advertisement(name: "blesim Probe", rssi: -55, uuids: ["180f"])))
        #expect(!filter.matches(Self.advertisement(name: "blesim Probe", rssi: -99, uuids: ["180f"])))   // below the floor
        #expect(!filter.matches(Self.advertisement(name: "blesim Probe", rssi: nil, uuids: ["180f"])))   // RSSI unknown
        #expect(!filter.matches(Self.advertisement(name: "blesim Probe", rssi: -55, uuids: ["1812"])))   // another client's UUID
        #expect(!filter.matches(Self.advertisement(name: "Foreign", rssi: -55, uuids: ["180f"])))
        #expect(!filter.matches(Self.advertisement(name: nil, rssi: -55, uuids: ["180f"])))
    }

    @Test("addresses are checked by blectl only: no Pattern goes to BlueZ")
    func addressesAreClientSide() throws {
        let probe = try #require(BluetoothAddress("C0:FF:EE:00:00:01"))
        let other = try #require(BluetoothAddress("C0:FF:EE:00:00:02"))
        let filter = DiscoveryFilter(addresses: [probe, other])
        #expect(filter.dbusValue.stringKeyedDictionary?["Pattern"] == nil)
        #expect(filter.dbusValue.stringKeyedDictionary?.keys.sorted() == ["DuplicateData", "RSSI", "Transport"])
        #expect(filter.matches(Self.advertisement(name: "blesim Probe", rssi: -55, uuids: [])))
        #expect(!filter.matches(Self.advertisement(name: "blesim Probe", rssi: -55, uuids: [], address: "C0:FF:EE:00:00:03")))
        // With another kind of filter, both must pass.
        let both = DiscoveryFilter(names: ["vendor"], addresses: [probe])
        #expect(!both.matches(Self.advertisement(name: "blesim Probe", rssi: -55, uuids: [])))
    }

    @Test(arguments: [nil, "", "C0-FF-EE-00-00-01", "C0:FF:EE:00:00:01"])
    func nameIsNilWhenThereIsNoRealName(_ raw: String?) {
        #expect(Self.advertisement(name: raw, rssi: nil, uuids: []).name == nil)
    }
}
