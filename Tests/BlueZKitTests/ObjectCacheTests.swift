import SimulatorHarness
import Testing
import DBusKit
@testable import BlueZKit

@Suite(.cpuBound) struct ObjectCacheTests {
    static let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"

    static func interfacesAdded(_ path: ObjectPath, _ interfaces: [String: [String: DBusValue]]) -> Message {
        Message(kind: .signal, path: "/", interface: BlueZ.objectManager, member: "InterfacesAdded", body: [
            .objectPath(path),
            .dictionary(keySignature: "s", valueSignature: "a{sv}", interfaces.sorted { $0.key < $1.key }.map {
                .init(.string($0.key), .stringVariantDictionary($0.value))
            }),
        ])
    }

    static func propertiesChanged(_ path: ObjectPath, _ interface: String, _ changed: [String: DBusValue], invalidated: [String] = []) -> Message {
        Message(kind: .signal, path: path, interface: BlueZ.properties, member: "PropertiesChanged",
                body: [.string(interface), .stringVariantDictionary(changed), .stringArray(invalidated)])
    }

    @Test func foldsAddedChangedInvalidatedAndRemoved() throws {
        var cache = ObjectCache()
        let added = cache.apply(Self.interfacesAdded(Self.device, [
            BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:01"), "RSSI": .int16(-55), "Connected": .boolean(false)],
            "org.freedesktop.DBus.Introspectable": [:],
        ]))
        guard case .added(let path, let interfaces)? = added else { Issue.record("expected .added, got \(String(describing: added))"); return }
        #expect(path == Self.device)
        #expect(Array(interfaces.keys) == [BlueZ.deviceInterface])  // unknown interfaces are not kept
        // The event carries the values the signal carried.
        #expect(interfaces[BlueZ.deviceInterface]?["RSSI"]?.integer == -55)
        #expect(cache.property("RSSI", of: Self.device, on: BlueZ.deviceInterface)?.integer == -55)

        let changed = cache.apply(Self.propertiesChanged(Self.device, BlueZ.deviceInterface, ["Connected": .boolean(true)], invalidated: ["RSSI"]))
        guard case .changed(_, _, let names, let invalidated)? = changed else { Issue.record("expected .changed"); return }
        #expect(Array(names.keys) == ["Connected"])
        #expect(names["Connected"]?.bool == true)
        #expect(invalidated == ["RSSI"])
        #expect(cache.property("Connected", of: Self.device, on: BlueZ.deviceInterface)?.bool == true)
        #expect(cache.property("RSSI", of: Self.device, on: BlueZ.deviceInterface) == nil)

        let removed = cache.apply(Message(kind: .signal, path: "/", interface: BlueZ.objectManager, member: "InterfacesRemoved",
                                          body: [.objectPath(Self.device), .stringArray([BlueZ.deviceInterface])]))
        guard case .removed? = removed else { Issue.record("expected .removed"); return }
        #expect(cache.objects[Self.device] == nil)
    }

    @Test func changesForUnknownObjectsAreIgnored() {
        var cache = ObjectCache()
        #expect(cache.apply(Self.propertiesChanged(Self.device, BlueZ.deviceInterface, ["RSSI": .int16(-40)])) == nil)
        #expect(cache.objects.isEmpty)
    }

    /// A characteristic's PropertiesChanged (the dictionary-kept interfaces): changed values
    /// replace and add, invalidated ones go; a change for an interface the object does not
    /// have here (one it lacks, or one the cache does not keep) is no event and adds nothing,
    /// and the other objects are untouched.
    @Test func changesFoldIntoTheInterfaceTheObjectHasAndNoOther() throws {
        let characteristic: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"
        var cache = ObjectCache()
        _ = cache.apply(Self.interfacesAdded(Self.device, [BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:01")]]))
        _ = cache.apply(Self.interfacesAdded(characteristic, [
            BlueZ.gattCharacteristicInterface: ["UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"),
                                                "Value": .bytes([1]), "Notifying": .boolean(false)],
        ]))

        let event = cache.apply(Self.propertiesChanged(characteristic, BlueZ.gattCharacteristicInterface,
                                                       ["Value": .bytes([2, 3]), "MTU": .uint16(185)], invalidated: ["Notifying"]))
        guard case .changed(characteristic, BlueZ.gattCharacteristicInterface, let changed, let invalidated)? = event else {
            Issue.record("expected .changed, got \(String(describing: event))")
            return
        }
        #expect(changed["Value"]?.bytes == [2, 3])
        #expect(invalidated == ["Notifying"])
        // A characteristic's Value is the event's, never the cache's.
        let properties = try #require(cache[characteristic, BlueZ.gattCharacteristicInterface])
        #expect(properties.keys.sorted() == ["MTU", "UUID"])
        #expect(properties["MTU"]?.integer == 185)

        // Interfaces the characteristic's object does not have: a kept one, and one not kept.
        for interface in [BlueZ.gattServiceInterface, BlueZ.deviceInterface, "org.bluez.MediaTransport1"] {
            #expect(cache.apply(Self.propertiesChanged(characteristic, interface, ["Value": .bytes([9])])) == nil)
            #expect(cache[characteristic, interface] == nil)
        }
        // The device's object has Device1 only.
        #expect(cache.apply(Self.propertiesChanged(Self.device, BlueZ.gattCharacteristicInterface, ["Value": .bytes([9])])) == nil)
        #expect(Set(cache.objects.keys) == [Self.device, characteristic])
        #expect(cache[characteristic, BlueZ.gattCharacteristicInterface]?.keys.sorted() == ["MTU", "UUID"])
    }

    /// A characteristic's or descriptor's Value is not kept, however it comes (InterfacesAdded,
    /// GetManagedObjects, PropertiesChanged alone or beside other properties), and a notification
    /// (Value alone) is still an event carrying its value; Device1's and Battery1's properties
    /// are kept as they come.
    @Test func aCharacteristicsOrDescriptorsValueIsTheEventsNeverTheCaches() throws {
        let characteristic: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"
        let descriptor: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011/desc0013"
        var cache = ObjectCache()
        _ = cache.apply(Self.interfacesAdded(characteristic, [
            BlueZ.gattCharacteristicInterface: ["UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"), "Value": .bytes([1])],
        ]))
        _ = cache.apply(Self.interfacesAdded(descriptor, [
            BlueZ.gattDescriptorInterface: ["UUID": .string("00002902-0000-1000-8000-00805f9b34fb"), "Value": .bytes([1, 0])],
        ]))
        let keptAfterAdded = (cache[characteristic, BlueZ.gattCharacteristicInterface]?.keys, cache[descriptor, BlueZ.gattDescriptorInterface]?.keys)
        #expect(keptAfterAdded.0 == ["UUID"])
        #expect(keptAfterAdded.1 == ["UUID"])

        for (path, interface) in [(characteristic, BlueZ.gattCharacteristicInterface), (descriptor, BlueZ.gattDescriptorInterface)] {
            let event = cache.apply(Self.propertiesChanged(path, interface, ["Value": .bytes([7, 8])]))
            guard case .changed(path, interface, let changed, let invalidated)? = event else {
                Issue.record("expected .changed on \(path), got \(String(describing: event))")
                continue
            }
            let carried = (changed["Value"]?.bytes, invalidated)
            #expect(carried.0 == [7, 8])
            #expect(carried.1 == [])
            let kept = cache[path, interface]?.keys
            #expect(kept == ["UUID"])
        }
        _ = cache.apply(Self.propertiesChanged(characteristic, BlueZ.gattCharacteristicInterface,
                                               ["Value": .bytes([9]), "Notifying": .boolean(true)]))
        let kept = cache[characteristic, BlueZ.gattCharacteristicInterface]?.dictionary
        #expect(kept == ["UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"), "Notifying": .boolean(true)])

        var loaded = ObjectCache()
        func interfaces(_ entries: [String: [String: DBusValue]]) -> DBusValue {
            .dictionary(keySignature: "s", valueSignature: "a{sv}",
                        entries.map { .init(.string($0.key), .stringVariantDictionary($0.value)) })
        }
        loaded.load(managedObjects: .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", [
            .init(.objectPath(characteristic), interfaces([BlueZ.gattCharacteristicInterface: ["UUID": .string("2a19"), "Value": .bytes([3])]])),
            .init(.objectPath(Self.device), interfaces([
                BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:01")],
                BlueZ.batteryInterface: ["Percentage": .byte(80)],
            ])),
        ]))
        let loadedKeys = (loaded[characteristic, BlueZ.gattCharacteristicInterface]?.keys, loaded[Self.device, BlueZ.batteryInterface]?.keys)
        #expect(loadedKeys.0 == ["UUID"])
        #expect(loadedKeys.1 == ["Percentage"])
    }

    /// Malformed signals (wrong types, missing arguments) are skipped, never a crash.
    static let malformed: [Message] = [
        Message(kind: .signal, path: "/", interface: BlueZ.objectManager, member: "InterfacesAdded", body: []),
        Message(kind: .signal, path: "/", interface: BlueZ.objectManager, member: "InterfacesAdded", body: [.string("not a path"), .int32(3)]),
        Message(kind: .signal, path: "/", interface: BlueZ.objectManager, member: "InterfacesRemoved", body: [.objectPath(device), .int32(1)]),
        Message(kind: .signal, path: device, interface: BlueZ.properties, member: "PropertiesChanged", body: [.int32(1), .int32(2)]),
        Message(kind: .signal, path: device, interface: BlueZ.properties, member: "PropertiesChanged", body: [.string(BlueZ.deviceInterface)]),
    ]

    @Test(arguments: 0..<5)
    func malformedSignalsAreSkipped(_ index: Int) {
        let message = Self.malformed[index]
        var cache = ObjectCache()
        _ = cache.apply(Self.interfacesAdded(Self.device, [BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:01")]]))
        let before = cache.objects
        #expect(cache.apply(message) == nil)
        #expect(cache.objects == before)
    }

    @Test func propertiesOfUnexpectedTypesGiveNilFieldsNotCrashes() throws {
        let weird: [String: DBusValue] = [
            "Address": .string("C0:FF:EE:00:00:01"), "Name": .int32(5), "RSSI": .string("loud"),
            "UUIDs": .array(elementSignature: "i", [.int32(1)]), "ManufacturerData": .string("x"),
            "ServiceData": .dictionary(keySignature: "s", valueSignature: "v", [.init(.string("nonsense"), .variant(.bytes([1])))]),
        ]
        let advertisement = try #require(Advertisement(path: Self.device, properties: ObjectCache.Properties(weird)))
        #expect(advertisement.name == nil)
        #expect(advertisement.rssi == nil)
        #expect(advertisement.uuids.isEmpty)
        #expect(advertisement.manufacturerData.isEmpty)
        #expect(advertisement.serviceData.isEmpty)
    }

    @Test func randomPropertyDictionariesNeverCrashTheDecoders() {
        // A bounded fuzz of property dictionaries: random keys from the real set, random types.
        var generator = SystemRandomNumberGenerator()
        let keys = ["Address", "AddressType", "Name", "Alias", "RSSI", "TxPower", "UUIDs", "ManufacturerData", "ServiceData", "Connected", "ServicesResolved"]
        func randomValue(_ depth: Int) -> DBusValue {
            switch Int.random(in: 0...(depth > 2 ? 5 : 9), using: &generator) {
            case 0: return .string(String(repeating: "C0:", count: Int.random(in: 0...6)))
            case 1: return .int16(Int16.random(in: .min ... .max))
            case 2: return .boolean(Bool.random())
            case 3: return .bytes((0..<Int.random(in: 0...8)).map { _ in UInt8.random(in: 0...255) })
            case 4: return .uint64(UInt64.random(in: 0 ... .max))
            case 5: return .objectPath("/org/bluez")
            case 6: return .variant(randomValue(depth + 1))
            case 7: return .array(elementSignature: "v", (0..<3).map { _ in .variant(randomValue(depth + 1)) })
            case 8: return .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(UInt16.random(in: 0...0xFFFF)), .variant(randomValue(depth + 1)))])
            default: return .stringVariantDictionary(["x": randomValue(depth + 1)])
            }
        }
        var decoded = 0
        for _ in 0..<5_000 {
            var properties = [String: DBusValue]()
            for key in keys where Bool.random() { properties[key] = randomValue(0) }
            if Advertisement(path: Self.device, properties: ObjectCache.Properties(properties)) != nil { decoded += 1 }
            var cache = ObjectCache()
            _ = cache.apply(Self.interfacesAdded(Self.device, [BlueZ.deviceInterface: properties]))
            _ = cache.gattServices(of: Self.device)
        }
        // The address falls back to the object path, so every dictionary decodes.
        #expect(decoded == 5_000)
    }
}

