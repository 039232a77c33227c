import Testing
import DBusKit
@testable import BlueZKit

/// The compact Device1 record of the object cache: every value reads back as the signal
/// carried it.
@Suite struct PackedPropertiesTests {
    /// Every kind of property bluetoothd 5.66 sends in Device1 (src/device.c), with the
    /// D-Bus types it sends them with, plus one name BlueZ may add later.
    static let device1: [String: DBusValue] = [
        "Address": .string("C0:FF:EE:00:00:01"),
        "AddressType": .string("random"),
        "Name": .string("Thermometer with a name longer than fifteen bytes: é∑"),
        "Alias": .string("Thermo"),
        "Icon": .string("input-keyboard"),
        "Class": .uint32(0x240404),
        "Appearance": .uint16(0x03C1),
        "UUIDs": .array(elementSignature: "s", [.string("0000180f-0000-1000-8000-00805f9b34fb"),
                                                .string("0000180a-0000-1000-8000-00805f9b34fb")]),
        "Paired": .boolean(true),
        "Bonded": .boolean(false),
        "Connected": .boolean(true),
        "Trusted": .boolean(false),
        "Blocked": .boolean(false),
        "WakeAllowed": .boolean(true),
        "LegacyPairing": .boolean(false),
        "Modalias": .string("usb:v1D6Bp0246d0537"),
        "Adapter": .objectPath("/org/bluez/hci0"),
        "RSSI": .int16(-67),
        "TxPower": .int16(-4),
        "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [
            .init(.uint16(0x004C), .variant(.bytes([0x02, 0x15, 0xFF]))),
            .init(.uint16(0x05F1), .variant(.bytes([]))),
        ]),
        "ServiceData": .dictionary(keySignature: "s", valueSignature: "v", [
            .init(.string("0000feaa-0000-1000-8000-00805f9b34fb"), .variant(.bytes([0x10, 0x00]))),
        ]),
        "AdvertisingFlags": .bytes([0x06]),
        "AdvertisingData": .dictionary(keySignature: "y", valueSignature: "v", [.init(.byte(0x16), .variant(.bytes([0xAA, 0xFE])))]),
        "ServicesResolved": .boolean(false),
        "Sets": .array(elementSignature: "(oa{sv})", [.structure([.objectPath("/org/bluez/hci0/set_1"),
                                                                  .dictionary(keySignature: "s", valueSignature: "v", [.init(.string("Rank"), .variant(.byte(1)))])])]),
        "PreferredBearer": .string("le"),
        // Not (yet) a BlueZ name: stored by name, read back all the same.
        "FutureProperty": .variant(.array(elementSignature: "x", [.int64(Int64.min), .int64(7)])),
        "Numbers": .structure([.int32(-5), .uint64(UInt64.max), .double(-0.5), .signature("a{sv}"), .int64(1)]),
        "Empty": .array(elementSignature: "s", []),
    ]

    @Test func everyDevice1PropertyReadsBackAsSent() {
        let packed = PackedProperties(Self.device1)
        #expect(packed.dictionary == Self.device1)
        for (name, value) in Self.device1 {
            #expect(packed.value(of: name) == value, "\(name)")
        }
        #expect(packed.value(of: "Missing") == nil)
        #expect(packed.values(of: PackedProperties.Selection(["RSSI", "Name", "Missing"])) == ["RSSI": .int16(-67), "Name": Self.device1["Name"]!])
        // Compact: well under what the decoded dictionary costs.
        #expect(packed.bytes.count < 700)
    }

    @Test func mergeReplacesAddsAndInvalidates() {
        var packed = PackedProperties(Self.device1)
        packed.merge(["RSSI": .int16(-40), "Name": .string("n"), "New": .string("x")], invalidated: ["TxPower", "Alias", "Nope"])
        var expected = Self.device1
        expected["RSSI"] = .int16(-40)
        expected["Name"] = .string("n")
        expected["New"] = .string("x")
        expected["TxPower"] = nil
        expected["Alias"] = nil
        #expect(packed.dictionary == expected)
        // A value changed and invalidated in one signal is dropped (invalidation applies after).
        packed.merge(["RSSI": .int16(-41)], invalidated: ["RSSI"])
        #expect(packed.value(of: "RSSI") == nil)
        #expect(packed.value(of: "Address") == .string("C0:FF:EE:00:00:01"))
    }

    @Test func fileDescriptorsStayDecoded() {
        var packed = PackedProperties(["Address": .string("C0:FF:EE:00:00:01"), "Fd": .unixFD(UnixFileDescriptor(owning: -1))])
        #expect(packed.value(of: "Fd")?.unixFD != nil)
        #expect(packed.value(of: "Address") == .string("C0:FF:EE:00:00:01"))
        packed.merge([:], invalidated: ["Fd"])
        #expect(packed.value(of: "Fd") == nil)
        #expect(packed.dictionary == ["Address": .string("C0:FF:EE:00:00:01")])
    }

    /// A selection reads the same values as a plain set of names, for known names, names
    /// stored by name, missing ones, and a value kept decoded (a file descriptor).
    @Test func selectionsReadWhatTheirNamesName() {
        var packed = PackedProperties(Self.device1)
        packed.merge(["Fd": .unixFD(UnixFileDescriptor(owning: -1)), "Later": .string("l")], invalidated: [])
        var all = Self.device1
        all["Later"] = .string("l")
        var generator = SystemRandomNumberGenerator()
        let names = Array(all.keys) + ["Fd", "Missing", "Address"]
        for _ in 0..<300 {
            let chosen = Set(names.filter { _ in Bool.random(using: &generator) })
            let selection = PackedProperties.Selection(chosen)
            let read = packed.values(of: selection)
            #expect(Set(read.keys) == chosen.subtracting(["Missing"]), "\(chosen)")
            for (name, value) in read where name != "Fd" { #expect(all[name] == value, "\(name)") }
            #expect(read["Fd"]?.unixFD != nil || !chosen.contains("Fd"))
            for name in names { #expect(selection.contains(name) == chosen.contains(name)) }
        }
        #expect(Advertisement.propertySelection.count == Advertisement.propertyNames.count)
    }

    /// A value that cannot be packed, merged among others: only it stays decoded, the entries
    /// written before and after it are whole.
    @Test func anUnpackableValueAmongOthersLeavesTheRestWhole() {
        var packed = PackedProperties(["Address": .string("C0:FF:EE:00:00:01")])
        packed.merge(["A": .string("a"), "Fd": .structure([.int32(1), .unixFD(UnixFileDescriptor(owning: -1))]),
                      "RSSI": .int16(-1), "Z": .bytes([1, 2])], invalidated: [])
        #expect(packed.value(of: "A") == .string("a"))
        #expect(packed.value(of: "RSSI") == .int16(-1))
        #expect(packed.value(of: "Z") == .bytes([1, 2]))
        #expect(packed.value(of: "Address") == .string("C0:FF:EE:00:00:01"))
        guard case .structure(let fields)? = packed.value(of: "Fd") else { Issue.record("Fd not read back"); return }
        #expect(fields.count == 2 && fields[0] == .int32(1) && fields[1].unixFD != nil)
        #expect(packed.dictionary.count == 5)
    }

    /// The cache keeps Device1 packed: signals fold into it as into a dictionary, and the
    /// advertisement built from the cache has every value of the signals.
    @Test func cacheFoldsDevice1SignalsIntoThePackedRecord() throws {
        var cache = ObjectCache()
        let path = ObjectCacheTests.device
        _ = cache.apply(ObjectCacheTests.interfacesAdded(path, [BlueZ.deviceInterface: Self.device1, BlueZ.batteryInterface: ["Percentage": .byte(80)]]))
        var expected = Self.device1.mapValues(\.unwrapped)
        #expect(cache[path, BlueZ.deviceInterface] == expected)
        #expect(cache[path, BlueZ.batteryInterface] == ["Percentage": .byte(80)])
        #expect(cache.paths(with: BlueZ.deviceInterface) == [path])
        #expect(cache.paths(with: BlueZ.batteryInterface) == [path])
        #expect(cache.objects[path] == [BlueZ.deviceInterface: expected, BlueZ.batteryInterface: ["Percentage": .byte(80)]])

        _ = cache.apply(ObjectCacheTests.propertiesChanged(path, BlueZ.deviceInterface, ["RSSI": .int16(-30)], invalidated: ["TxPower"]))
        expected["RSSI"] = .int16(-30)
        expected["TxPower"] = nil
        #expect(cache[path, BlueZ.deviceInterface] == expected)
        let properties = try #require(cache.deviceProperties(Advertisement.propertySelection, of: path))
        let advertisement = try #require(Advertisement(path: path, properties: properties))
        #expect(advertisement.rssi == -30)
        #expect(advertisement.txPower == nil)
        #expect(advertisement.appearance == 0x03C1)
        #expect(advertisement.manufacturerData == [0x004C: [0x02, 0x15, 0xFF], 0x05F1: []])
        #expect(advertisement.serviceData.count == 1)
        #expect(advertisement.uuids.count == 2)
        #expect(advertisement.connected)
        #expect(advertisement.addressType == "random")

        _ = cache.apply(Message(kind: .signal, path: "/", interface: BlueZ.objectManager, member: "InterfacesRemoved",
                                body: [.objectPath(path), .stringArray([BlueZ.deviceInterface])]))
        #expect(cache[path, BlueZ.deviceInterface] == nil)
        #expect(cache.paths(with: BlueZ.deviceInterface).isEmpty)
        #expect(cache.objects[path] == [BlueZ.batteryInterface: ["Percentage": .byte(80)]])
    }
}
