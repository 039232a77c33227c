import Testing
import SimulatorHarness
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

    @Test func aValueOfTheSameSizeIsReplacedInPlaceAsAnyOtherMergeWouldReplaceIt() {
        var values = Self.device1
        var record = PackedProperties(values)
        for (name, value) in [("RSSI", DBusValue.int16(-20)), ("Connected", .boolean(false)), ("FutureProperty", .variant(.array(elementSignature: "x", [.int64(1), .int64(2)]))),
                              ("Name", .string("same length? no")), ("RSSI", .int32(5)), ("Brand new", .byte(1))] {
            record.merge(PackedProperties([name: value]), invalidated: [])
            values[name] = value
            #expect(record.dictionary == values, "\(name)")
        }
        // In place: the entry keeps its position (a merge that rebuilds appends it last).
        var inPlace = PackedProperties(["RSSI": .int16(-1), "Name": .string("x")])
        let firstKey = inPlace.keys.first
        inPlace.merge(PackedProperties([firstKey!: firstKey == "RSSI" ? .int16(-2) : .string("y")]), invalidated: [])
        #expect(inPlace.keys.first == firstKey)
    }

    @Test func knownNamesAreFoundByTheirBits() {
        let record = PackedProperties(["RSSI": .int16(-1), "Other": .byte(1)])
        #expect(record.hasAnyKnown(PackedProperties.knownMask(["RSSI"])))
        #expect(record.hasAnyKnown(PackedProperties.knownMask(["TxPower", "RSSI"])))
        #expect(!record.hasAnyKnown(PackedProperties.knownMask(["TxPower", "Name"])))
        #expect(!record.hasAnyKnown(PackedProperties.knownMask(["Other"])))   // not a known name: no bit
        // Every name the scan watches for is a known one (a renamed one would never match).
        for names in [Adapter.sightingProperties, Adapter.advertisingDataProperties] {
            #expect(PackedProperties.knownMask(names).nonzeroBitCount == names.count)
        }
    }

    @Test func fileDescriptorsStayDecoded() {
        var packed = PackedProperties(["Address": .string("C0:FF:EE:00:00:01"), "Fd": .unixFD(UnixFileDescriptor(owning: -1))])
        #expect(packed.value(of: "Fd")?.unixFD != nil)
        #expect(packed.value(of: "Address") == .string("C0:FF:EE:00:00:01"))
        packed.merge([:], invalidated: ["Fd"])
        #expect(packed.value(of: "Fd") == nil)
        #expect(packed.dictionary == ["Address": .string("C0:FF:EE:00:00:01")])
    }

    /// Each property an advertisement reads, in the types BlueZ sends, other types, and variants.
    static let advertisementChoices: [String: [DBusValue?]] = [
        "Address": [nil, .string("C0:FF:EE:00:00:01"), .string("not an address"), .variant(.string("AA:BB:CC:DD:EE:FF")), .int16(1)],
        "AddressType": [nil, .string("random"), .variant(.variant(.string("public"))), .boolean(true)],
        "Name": [nil, .string("Thermometer with a name longer than fifteen bytes: é∑"), .string(""), .string("C0-FF-EE-00-00-01"),
                 .string("C0:FF:EE:00:00:01"), .uint32(5)],
        "RSSI": [nil, .int16(-67), .variant(.int32(-100)), .uint64(UInt64.max), .uint64(5), .byte(3), .string("-1")],
        "TxPower": [nil, .int16(-4), .int64(Int64.min), .double(1)],
        "Appearance": [nil, .uint16(0x03C1), .uint32(0x1_0000), .int16(-1), .variant(.uint16(0x0080))],
        "UUIDs": [nil, .array(elementSignature: "s", [.string("0000180f-0000-1000-8000-00805f9b34fb"), .string("180a"), .string("junk")]),
                  .array(elementSignature: "s", []), .array(elementSignature: "v", [.variant(.string("180f"))]), .stringArray(["180d"])],
        "ManufacturerData": [nil, PackedPropertiesTests.device1["ManufacturerData"]!,
                             .dictionary(keySignature: "q", valueSignature: "v", [
                                 .init(.uint16(0x004C), .variant(.array(elementSignature: "y", [.byte(1), .byte(2)]))),
                                 .init(.uint32(0x1_0000), .variant(.bytes([9]))),
                                 .init(.variant(.uint16(7)), .bytes([7])),
                                 .init(.uint16(8), .variant(.array(elementSignature: "v", [.variant(.byte(1))]))),
                                 .init(.uint16(9), .variant(.array(elementSignature: "v", []))),
                                 .init(.uint16(10), .variant(.array(elementSignature: "y", []))),
                                 .init(.uint16(0x004C), .variant(.bytes([3]))),
                                 .init(.string("x"), .variant(.bytes([4]))),
                             ]),
                             .array(elementSignature: "y", [.byte(1)]), .variant(.dictionary(keySignature: "q", valueSignature: "v", []))],
        "ServiceData": [nil, PackedPropertiesTests.device1["ServiceData"]!,
                        .dictionary(keySignature: "s", valueSignature: "v", [
                            .init(.string("180f"), .variant(.bytes([0x10]))),
                            .init(.string("not a uuid"), .variant(.bytes([1]))),
                            .init(.uint16(1), .variant(.bytes([2]))),
                            .init(.string("feaa"), .variant(.string("not bytes"))),
                            .init(.string("fe9f"), .variant(.array(elementSignature: "q", []))),
                        ])],
        "Connected": [nil, .boolean(true), .boolean(false), .variant(.boolean(true)), .byte(1)],
    ]

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
        #expect(cache[path, BlueZ.deviceInterface]?.dictionary == expected)
        #expect(cache[path, BlueZ.batteryInterface] == ["Percentage": .byte(80)])
        #expect(cache.paths(with: BlueZ.deviceInterface) == [path])
        #expect(cache.paths(with: BlueZ.batteryInterface) == [path])
        #expect(cache.objects[path] == [BlueZ.deviceInterface: ObjectCache.Properties(expected), BlueZ.batteryInterface: ["Percentage": .byte(80)]])

        _ = cache.apply(ObjectCacheTests.propertiesChanged(path, BlueZ.deviceInterface, ["RSSI": .int16(-30)], invalidated: ["TxPower"]))
        expected["RSSI"] = .int16(-30)
        expected["TxPower"] = nil
        #expect(cache[path, BlueZ.deviceInterface]?.dictionary == expected)
        let advertisement = try #require(cache.advertisement(at: path))
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
