import SimulatorHarness
import Testing
import DBusKit
@testable import BlueZKit

/// The object cache packs a received signal's properties straight from its wire form; a
/// message made here (or one the wire reader does not take) is read decoded. Both ways must
/// give the same cache and the same events, for BlueZ's shapes and for random values of
/// every D-Bus type; and the wire readers must take BlueZ's messages (not leave them to the
/// decoded path) and pack each entry byte for byte as the decoded path packs it.
@Suite(.cpuBound) struct ObjectCacheWireTests {
    static let bluez = ":1.7"
    static let device = ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01")

    /// The same signal twice: as received (wire form kept) and as a decoded message.
    static func bothWays(_ path: ObjectPath, _ interface: String, _ member: String, _ values: [DBusValue]) throws -> (wire: Message, decoded: Message) {
        let received = try #require(try MessageRoundTrip.receivedSignal(path: path, interface: interface, member: member,
                                                                        sender: bluez, values))
        let decoded = Message(kind: .signal, sender: bluez, path: path, interface: interface, member: member,
                              signature: received.signature, body: values)
        return (received, decoded)
    }

    static func added(_ path: ObjectPath, _ interfaces: [String: [String: DBusValue]]) -> [DBusValue] {
        [.objectPath(path), .dictionary(keySignature: "s", valueSignature: "a{sv}", interfaces.sorted { $0.key < $1.key }.map {
            .init(.string($0.key), .dictionary(keySignature: "s", valueSignature: "v", $0.value.sorted { $0.key < $1.key }.map {
                .init(.string($0.key), .variant($0.value))
            }))
        })]
    }

    static func changed(_ interface: String, _ changed: [String: DBusValue], invalidated: [String]) -> [DBusValue] {
        [.string(interface),
         .dictionary(keySignature: "s", valueSignature: "v", changed.sorted { $0.key < $1.key }.map { .init(.string($0.key), .variant($0.value)) }),
         .array(elementSignature: "s", invalidated.map(DBusValue.string))]
    }

    /// Folds each signal into two caches, one fed the received messages and one the decoded
    /// ones, and checks every event and the caches alike after each.
    static func expectSameBothWays(_ signals: [(ObjectPath, String, String, [DBusValue])]) throws {
        var wireCache = ObjectCache()
        var decodedCache = ObjectCache()
        for (path, interface, member, values) in signals {
            let (wire, decoded) = try bothWays(path, interface, member, values)
            let wireEvent = wireCache.apply(wire)
            let decodedEvent = decodedCache.apply(decoded)
            #expect(wireEvent == decodedEvent, "\(member) \(values)")
            #expect(wireCache.objects == decodedCache.objects, "\(member) \(values)")
            for (path, interfaces) in wireCache.objects {
                for (name, properties) in interfaces { expectPackedAsDecoded(properties, "\(path) \(name)") }
            }
        }
    }

    @Test func everyKnownNameIsFoundByItsBytesAndNoOther() {
        func index(_ name: String) -> UInt8? {
            var name = name
            return name.withUTF8 { PackedWriter.knownIndex(utf8: UnsafeRawBufferPointer($0)) }
        }
        #expect(PackedProperties.knownNames.count < 64)   // a bit each in knownMask
        for (i, name) in PackedProperties.knownNames.enumerated() {
            #expect(index(name) == UInt8(i), "\(name)")
        }
        // Same length, first and last byte as a known name, or a prefix of one: not it.
        for other in ["", "A", "Adress", "AddrXss", "RSXI", "Names", "ServiceDatX", "ServicesResolvedX"] {
            #expect(index(other) == nil, "\(other)")
        }
    }

    /// `record`'s bytes are, entry by entry in its order, what the decoded path packs for the
    /// same name and value.
    static func expectPackedAsDecoded(_ record: ObjectCache.Properties, _ comment: String) {
        var expected = [UInt8]()
        for (name, value) in record { expected += PackedProperties([name: value]).bytes }
        #expect(record.packed.bytes == expected, "\(comment)")
    }

    @Test func theWireReadersTakeBlueZsMessages() throws {
        let device = PackedPropertiesTests.device1
        let (added, addedDecoded) = try Self.bothWays(ObjectPath("/"), BlueZ.objectManager, "InterfacesAdded",
                                                      Self.added(Self.device, [BlueZ.deviceInterface: device, "org.bluez.NotCached1": ["X": .int32(1)]]))
        let addedWire = try #require(added.wire)
        let (path, interfaces) = try #require(ObjectCache.interfacesAdded(wire: addedWire))
        #expect(path == Self.device)
        #expect(Array(interfaces.keys) == [BlueZ.deviceInterface])
        #expect(interfaces == ObjectCache.interfaces(addedDecoded.body[1]))
        let record = try #require(interfaces[BlueZ.deviceInterface])
        Self.expectPackedAsDecoded(record, "InterfacesAdded")
        // Kept without the room reserved for the wire form (twice its size): memory per device.
        #expect(record.packed.bytes.capacity <= record.packed.bytes.count + 32)

        let (changed, _) = try Self.bothWays(Self.device, BlueZ.properties, "PropertiesChanged",
                                             Self.changed(BlueZ.deviceInterface, ["RSSI": .int16(-3), "Name": .string("n")], invalidated: ["TxPower"]))
        let changedWire = try #require(changed.wire)
        let read = try #require(ObjectCache.propertiesChanged(wire: changedWire, wanted: { $0 == BlueZ.deviceInterface }))
        guard case .read(let (interface, properties, invalidated)) = read else { Issue.record("not read: \(read)"); return }
        #expect(interface == BlueZ.deviceInterface)
        #expect(properties == ["RSSI": .int16(-3), "Name": .string("n")])
        #expect(invalidated == ["TxPower"])
        Self.expectPackedAsDecoded(properties, "PropertiesChanged")
        // An interface the cache does not keep of that object: its properties are not read.
        guard case .notWanted? = ObjectCache.propertiesChanged(wire: changedWire, wanted: { _ in false }) else {
            Issue.record("expected notWanted")
            return
        }

        let objects = FakeBlueZ.managedObjects([Self.device: [BlueZ.deviceInterface: device, BlueZ.batteryInterface: ["Percentage": .byte(9)]]])
        let (reply, _) = try Self.bothWays(ObjectPath("/"), BlueZ.objectManager, "GetManagedObjects", [objects])
        let replyWire = try #require(reply.wire)
        let loaded = try #require(ObjectCache.managedObjects(wire: replyWire))
        #expect(loaded.count == 1)
        #expect(loaded.first?.0 == Self.device)
        #expect(loaded.first?.1 == ObjectCache.interfaces(objects.dictionaryEntries![0].value))
    }

    /// Tens of thousands of distinct names in one `a{sv}` (only org.bluez's owner can send it):
    /// packed, then changed and invalidated, in time linear in the names. Each name was looked
    /// up in a list of those seen (to find one sent twice) and of those changed: 80,000 names
    /// took 28 s in a release build; now a fraction of a second.
    @Test(.timeLimit(.minutes(1))) func manyDistinctNamesAreFoldedInLinearTime() throws {
        let n = 80_000
        var properties = [String: DBusValue](minimumCapacity: n)
        for i in 0..<n { properties["p\(i)"] = .byte(UInt8(i & 0xFF)) }
        let (added, _) = try Self.bothWays(ObjectPath("/"), BlueZ.objectManager, "InterfacesAdded",
                                           Self.added(Self.device, [BlueZ.deviceInterface: properties]))
        var cache = ObjectCache()
        _ = cache.apply(added)
        #expect(cache[Self.device, BlueZ.deviceInterface]?.count == n)
        var changed = [String: DBusValue](minimumCapacity: n / 2)
        for i in stride(from: 0, to: n, by: 2) { changed["p\(i)"] = .uint16(UInt16(i & 0xFFFF)) }
        let (change, _) = try Self.bothWays(Self.device, BlueZ.properties, "PropertiesChanged",
                                            Self.changed(BlueZ.deviceInterface, changed, invalidated: (0..<1000).map { "p\($0 * 2 + 1)" }))
        _ = cache.apply(change)
        let record = try #require(cache[Self.device, BlueZ.deviceInterface])
        #expect(record.count == n - 1000)
        #expect(record["p2"] == .uint16(2))
        #expect(record["p3"] == nil)
        #expect(record["p\(n - 1)"] == .byte(UInt8((n - 1) & 0xFF)))
    }

    @Test func receivedSignalsKeepTheirWireForm() throws {
        let (wire, decoded) = try Self.bothWays(Self.device, BlueZ.properties, "PropertiesChanged",
                                                Self.changed(BlueZ.deviceInterface, ["RSSI": .int16(-60)], invalidated: []))
        // Without this the suite would compare the decoded path with itself.
        #expect(wire.wire != nil)
        #expect(decoded.wire == nil)
        #expect(wire.body == decoded.body)
    }

    @Test func bluezShapesPackTheSameBothWays() throws {
        let device = PackedPropertiesTests.device1
        try Self.expectSameBothWays([
            (ObjectPath("/"), BlueZ.objectManager, "InterfacesAdded",
             Self.added(Self.device, [BlueZ.deviceInterface: device, BlueZ.batteryInterface: ["Percentage": .byte(80)],
                                      "org.bluez.NotCached1": ["X": .int32(1)]])),
            (Self.device, BlueZ.properties, "PropertiesChanged",
             Self.changed(BlueZ.deviceInterface, ["RSSI": .int16(-40), "Name": .string("renamed"), "New": .bytes([1, 2])],
                          invalidated: ["TxPower", "Name"])),
            (Self.device, BlueZ.properties, "PropertiesChanged",
             Self.changed(BlueZ.batteryInterface, ["Percentage": .byte(79)], invalidated: [])),
            // An interface the object does not have here: no event, nothing folded.
            (Self.device, BlueZ.properties, "PropertiesChanged",
             Self.changed(BlueZ.adapterInterface, ["Powered": .boolean(false)], invalidated: [])),
            (Self.device, BlueZ.properties, "PropertiesChanged",
             Self.changed(BlueZ.deviceInterface, [:], invalidated: ["RSSI", "ManufacturerData", "Unknown"])),
            (ObjectPath("/"), BlueZ.objectManager, "InterfacesAdded",
             Self.added(Self.device, [BlueZ.deviceInterface: ["RSSI": .int16(-90), "ServicesResolved": .boolean(true)]])),
            // Counts of 128 and more take more than one byte in the record.
            (Self.device, BlueZ.properties, "PropertiesChanged",
             Self.changed(BlueZ.deviceInterface, [
                "UUIDs": .array(elementSignature: "s", (0..<300).map { .string(String(format: "%08x-0000-1000-8000-00805f9b34fb", $0)) }),
                "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", (0..<130).map { .init(.uint16(UInt16($0)), .variant(.bytes([UInt8($0)]))) }),
                "AdvertisingFlags": .bytes(Array(repeating: 6, count: 200)),
             ], invalidated: [])),
        ])
    }

    @Test func variantsAreUnwrappedAndRepeatedNamesKeepTheLastValueBothWays() throws {
        let properties: DBusValue = .dictionary(keySignature: "s", valueSignature: "v", [
            .init(.string("RSSI"), .variant(.variant(.variant(.int16(-5))))),
            .init(.string("Name"), .variant(.string("first"))),
            .init(.string("Name"), .variant(.string("last"))),
        ])
        let body: [DBusValue] = [.objectPath(Self.device), .dictionary(keySignature: "s", valueSignature: "a{sv}", [.init(.string(BlueZ.deviceInterface), properties)])]
        try Self.expectSameBothWays([(ObjectPath("/"), BlueZ.objectManager, "InterfacesAdded", body)])
        var cache = ObjectCache()
        _ = cache.apply(try Self.bothWays(ObjectPath("/"), BlueZ.objectManager, "InterfacesAdded", body).wire)
        #expect(cache.property("RSSI", of: Self.device, on: BlueZ.deviceInterface) == .int16(-5))
        #expect(cache.property("Name", of: Self.device, on: BlueZ.deviceInterface) == .string("last"))
    }

    @Test func randomPropertiesPackTheSameBothWays() throws {
        var g = SystemRandomNumberGenerator()
        let names = PackedProperties.knownNames + ["Other", "Another name", "é"]
        for _ in 0..<150 {
            func properties() -> [String: DBusValue] {
                var p = [String: DBusValue]()
                for _ in 0..<Int.random(in: 0...6, using: &g) { p[names.randomElement(using: &g)!] = Self.randomValue(depth: 3, using: &g) }
                return p
            }
            try Self.expectSameBothWays([
                (ObjectPath("/"), BlueZ.objectManager, "InterfacesAdded", Self.added(Self.device, [BlueZ.deviceInterface: properties()])),
                (Self.device, BlueZ.properties, "PropertiesChanged",
                 Self.changed(BlueZ.deviceInterface, properties(), invalidated: Array(names.shuffled(using: &g).prefix(Int.random(in: 0...3, using: &g))))),
                (Self.device, BlueZ.properties, "PropertiesChanged", Self.changed(BlueZ.deviceInterface, properties(), invalidated: [])),
            ])
        }
    }

    @Test func managedObjectsLoadTheSameBothWays() throws {
        let adapter = ObjectPath("/org/bluez/hci0")
        let objects = FakeBlueZ.managedObjects([
            Self.device: [BlueZ.deviceInterface: PackedPropertiesTests.device1, BlueZ.batteryInterface: ["Percentage": .byte(80)],
                          "org.bluez.NotCached1": ["X": .int32(1)]],
            adapter: [BlueZ.adapterInterface: ["Powered": .boolean(true), "Address": .string("00:AA:01:00:00:23")]],
            ObjectPath("/org/bluez"): ["org.bluez.AgentManager1": [:]],
        ])
        let (wire, decoded) = try Self.bothWays(ObjectPath("/"), BlueZ.objectManager, "GetManagedObjects", [objects])
        #expect(wire.wire != nil)
        var fromWire = ObjectCache()
        fromWire.load(managedObjectsReply: wire)
        var fromValues = ObjectCache()
        fromValues.load(managedObjectsReply: decoded)
        #expect(fromWire.objects == fromValues.objects)
        #expect(fromWire.objects.count == 2)
        #expect(fromWire.property("Percentage", of: Self.device, on: BlueZ.batteryInterface) == .byte(80))
        #expect(fromWire.property("Powered", of: adapter, on: BlueZ.adapterInterface) == .boolean(true))
        #expect(fromWire[Self.device, BlueZ.deviceInterface]?.dictionary == PackedPropertiesTests.device1.mapValues(\.unwrapped))
        #expect(fromWire[Self.device, "org.bluez.NotCached1"] == nil)
    }

    @Test func aFileDescriptorLeavesTheSignalToTheDecodedPath() throws {
        // libdbus cannot marshal a descriptor into bytes, so the wire reader never sees one; a
        // signal carrying one is read decoded, and a descriptor among values made here stays
        // decoded beside the packed record.
        let fd = UnixFileDescriptor(owning: -1)
        var cache = ObjectCache()
        let event = cache.apply(Message(kind: .signal, sender: Self.bluez, path: ObjectPath("/"), interface: BlueZ.objectManager,
                                        member: "InterfacesAdded", signature: "oa{sa{sv}}",
                                        body: Self.added(Self.device, [BlueZ.deviceInterface: ["Handle": .unixFD(fd), "RSSI": .int16(-1)]])))
        #expect(event != nil)
        #expect(cache.property("RSSI", of: Self.device, on: BlueZ.deviceInterface) == .int16(-1))
        #expect(cache.property("Handle", of: Self.device, on: BlueZ.deviceInterface) == .unixFD(fd))
    }

    /// A random value of a random type, at most `depth` containers deep.
    static func randomValue(depth: Int, using g: inout SystemRandomNumberGenerator) -> DBusValue {
        switch Int.random(in: 0..<(depth > 0 ? 17 : 12), using: &g) {
        case 0: return .byte(UInt8.random(in: 0...255, using: &g))
        case 1: return .boolean(Bool.random(using: &g))
        case 2: return .int16(Int16.random(in: .min ... .max, using: &g))
        case 3: return .uint16(UInt16.random(in: 0 ... .max, using: &g))
        case 4: return .int32(Int32.random(in: .min ... .max, using: &g))
        case 5: return .uint32(UInt32.random(in: 0 ... .max, using: &g))
        case 6: return .int64(Int64.random(in: .min ... .max, using: &g))
        case 7: return .uint64(UInt64.random(in: 0 ... .max, using: &g))
        case 8: return .double(Double(Int.random(in: -1000...1000, using: &g)) / 8)
        case 9: return .string(["", "a", "é€😀", String(repeating: "x", count: Int.random(in: 0...200, using: &g))].randomElement(using: &g)!)
        case 10: return .objectPath(ObjectPath("/org/bluez/hci0/dev_\(Int.random(in: 0...9, using: &g))"))
        case 11: return .signature(["", "s", "a{sv}", "(yv)"].randomElement(using: &g)!)
        case 12: return .bytes((0..<Int.random(in: 0...300, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) })
        case 13:
            // Elements of one type: the prototype's shape with fresh basic values.
            let prototype = randomValue(depth: depth - 1, using: &g)
            if case .bytes = prototype { return .array(elementSignature: "ay", [prototype, .bytes([])]) }
            if case .byte = prototype { return .bytes([]) }
            return .array(elementSignature: prototype.signature, Array(repeating: prototype, count: Int.random(in: 0...3, using: &g)))
        case 14:
            let key: DBusValue = [.uint16(0x004C), .string("0000feaa-0000-1000-8000-00805f9b34fb"), .byte(0x16)].randomElement(using: &g)!
            let value = DBusValue.variant(randomValue(depth: depth - 1, using: &g))
            return .dictionary(keySignature: key.signature, valueSignature: "v",
                               Array(repeating: DBusValue.DictEntry(key, value), count: Int.random(in: 0...2, using: &g)))
        case 15:
            return .structure((0..<Int.random(in: 1...4, using: &g)).map { _ in randomValue(depth: depth - 1, using: &g) })
        default:
            return .variant(randomValue(depth: depth - 1, using: &g))
        }
    }
}
