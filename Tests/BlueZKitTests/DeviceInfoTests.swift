// DeviceInfo and AdapterInfo: Device1/Battery1 and Adapter1 properties decoded exactly, nil
// where BlueZ has no value or an odd type, never a crash; the adapter choices blectl makes
// (powered, or merely present) against a fake bluetoothd.

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite(.cpuBound) struct DeviceInfoTests {
    static let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_B1"

    /// Every property a BlueZ 5.66 Device1 can have, with the types BlueZ sends.
    static let keyboard: [String: DBusValue] = [
        "Address": .string("C0:FF:EE:00:00:B1"), "AddressType": .string("random"), "Name": .string("blesim Keys"),
        "Alias": .string("My keyboard"), "Paired": .boolean(true), "Bonded": .boolean(true), "Trusted": .boolean(true),
        "Blocked": .boolean(false), "Connected": .boolean(true), "ServicesResolved": .boolean(false),
        "RSSI": .int16(-61), "TxPower": .int16(-8), "Appearance": .uint16(0x03C1), "Icon": .string("input-keyboard"),
        "Class": .uint32(0x240404), "Modalias": .string("usb:v046Dp4023d0006"),
        "UUIDs": .stringArray(["00001812-0000-1000-8000-00805f9b34fb", "not a uuid", "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"]),
        "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(0x05F1), .variant(.bytes([1, 2])))]),
        "ServiceData": .dictionary(keySignature: "s", valueSignature: "v",
                                   [.init(.string("0000feed-0000-1000-8000-00805f9b34fb"), .variant(.bytes([2, 0, 0x31])))]),
        "Adapter": .objectPath("/org/bluez/hci0"), "LegacyPairing": .boolean(false),
    ]

    @Test func everyPropertyDecodedExactly() throws {
        let info = try #require(DeviceInfo(path: Self.device, device: ObjectCache.Properties(Self.keyboard), battery: ["Percentage": .byte(73), "Source": .string("x")]))
        #expect(info.address == BluetoothAddress("C0:FF:EE:00:00:B1"))
        #expect(info.objectPath == Self.device)
        #expect(info.adapterPath == "/org/bluez/hci0")
        #expect(info.adapterName == "hci0")
        #expect(info.addressType == "random")
        #expect(info.name == "blesim Keys")
        #expect(info.alias == "My keyboard")
        #expect(info.paired == true)
        #expect(info.bonded == true)
        #expect(info.trusted == true)
        #expect(info.blocked == false)
        #expect(info.connected == true)
        #expect(info.servicesResolved == false)
        #expect(info.rssi == -61)
        #expect(info.txPower == -8)
        #expect(info.appearance == 0x03C1)
        #expect(info.icon == "input-keyboard")
        #expect(info.deviceClass == 0x240404)
        #expect(info.modalias == "usb:v046Dp4023d0006")
        #expect(info.uuids == [BluetoothUUID("1812")!, BluetoothUUID("5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!])
        #expect(info.manufacturerData == [0x05F1: [1, 2]])
        #expect(info.serviceData == [BluetoothUUID("feed")!: [2, 0, 0x31]])
        #expect(info.batteryPercentage == 73)
    }

    /// A cached device as a BlueZ older than 5.65 shows it: no Bonded, no RSSI, no Name.
    @Test func absentPropertiesAreNil() throws {
        let info = try #require(DeviceInfo(path: Self.device, device: ["Address": .string("C0:FF:EE:00:00:B1"),
                                                                        "Alias": .string("C0-FF-EE-00-00-B1")]))
        #expect(info.name == nil)
        #expect(info.alias == "C0-FF-EE-00-00-B1")
        for value in [info.paired, info.bonded, info.trusted, info.blocked, info.connected, info.servicesResolved] {
            #expect(value == nil)
        }
        #expect(info.rssi == nil && info.txPower == nil && info.appearance == nil && info.deviceClass == nil)
        #expect(info.icon == nil && info.modalias == nil && info.addressType == nil && info.batteryPercentage == nil)
        #expect(info.uuids.isEmpty && info.manufacturerData.isEmpty && info.serviceData.isEmpty)
        // No Adapter property: the object path's parent.
        #expect(info.adapterPath == "/org/bluez/hci0")
    }

    @Test func oddTypesAndOutOfRangeValuesGiveNil() throws {
        let odd: [String: DBusValue] = [
            "Address": .int32(7), "AddressType": .boolean(true), "Name": .bytes([0x41]), "Alias": .int16(3),
            "Paired": .string("yes"), "Bonded": .int32(1), "Trusted": .variant(.variant(.string("no"))), "Blocked": .bytes([1]),
            "Connected": .objectPath("/x"), "ServicesResolved": .double(1), "RSSI": .string("loud"), "TxPower": .boolean(true),
            "Appearance": .int32(70_000), "Icon": .uint32(1), "Class": .int64(-1), "Modalias": .array(elementSignature: "s", []),
            "UUIDs": .string("180f"), "ManufacturerData": .bytes([1]), "ServiceData": .int32(0), "Adapter": .string("/org/bluez/hci9"),
        ]
        // The address falls back to the object path.
        let info = try #require(DeviceInfo(path: Self.device, device: ObjectCache.Properties(odd), battery: ["Percentage": .string("full")]))
        #expect(info.address == BluetoothAddress("C0:FF:EE:00:00:B1"))
        #expect(info.adapterPath == "/org/bluez/hci0")
        #expect(info.addressType == nil && info.name == nil && info.alias == nil)
        for value in [info.paired, info.bonded, info.trusted, info.blocked, info.connected, info.servicesResolved] {
            #expect(value == nil)
        }
        #expect(info.rssi == nil && info.txPower == nil && info.appearance == nil && info.deviceClass == nil)
        #expect(info.icon == nil && info.modalias == nil && info.batteryPercentage == nil)
        #expect(info.uuids.isEmpty && info.manufacturerData.isEmpty && info.serviceData.isEmpty)
        // Variants are looked through: a boolean in two variants is still a boolean.
        #expect(DeviceInfo(path: Self.device, device: ["Paired": .variant(.variant(.boolean(true)))])?.paired == true)
    }

    @Test func noAddressAnywhereIsNoRecord() {
        #expect(DeviceInfo(path: "/org/bluez/hci0/service0010", device: ["Name": .string("x")]) == nil)
        var cache = ObjectCache()
        cache.load(managedObjects: FakeBlueZ.managedObjects([Self.device: [BlueZ.adapterInterface: ["Powered": .boolean(true)]]]))
        #expect(DeviceInfo(path: Self.device, in: cache) == nil)   // no Device1 on that object
    }

    @Test func readFromTheCacheWithBattery1() throws {
        var cache = ObjectCache()
        cache.load(managedObjects: FakeBlueZ.managedObjects([
            Self.device: [BlueZ.deviceInterface: Self.keyboard, BlueZ.batteryInterface: ["Percentage": .byte(40)]],
        ]))
        let info = try #require(DeviceInfo(path: Self.device, in: cache))
        #expect(info.batteryPercentage == 40)
        #expect(info.name == "blesim Keys")
    }

    @Test func randomPropertyDictionariesNeverCrashTheDecoders() {
        var generator = SystemRandomNumberGenerator()
        let deviceKeys = Array(Self.keyboard.keys)
        let adapterKeys = ["Address", "AddressType", "Name", "Alias", "Class", "Powered", "PowerState", "Discoverable",
                           "DiscoverableTimeout", "Pairable", "PairableTimeout", "Discovering", "UUIDs", "Modalias", "Roles"]
        func randomValue(_ depth: Int) -> DBusValue {
            switch Int.random(in: 0...(depth > 2 ? 6 : 10), using: &generator) {
            case 0: return .string(String(repeating: "C0:", count: Int.random(in: 0...6)))
            case 1: return .int16(Int16.random(in: .min ... .max))
            case 2: return .boolean(Bool.random())
            case 3: return .bytes((0..<Int.random(in: 0...8)).map { _ in UInt8.random(in: 0...255) })
            case 4: return .uint64(UInt64.random(in: 0 ... .max))
            case 5: return .int64(Int64.random(in: .min ... .max))
            case 6: return .objectPath("/org/bluez")
            case 7: return .variant(randomValue(depth + 1))
            case 8: return .array(elementSignature: "v", (0..<3).map { _ in .variant(randomValue(depth + 1)) })
            case 9: return .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(UInt16.random(in: 0...0xFFFF)), .variant(randomValue(depth + 1)))])
            default: return .stringVariantDictionary(["x": randomValue(depth + 1)])
            }
        }
        var decoded = 0
        for _ in 0..<3_000 {
            var device = [String: DBusValue]()
            for key in deviceKeys where Bool.random() { device[key] = randomValue(0) }
            var adapter = [String: DBusValue]()
            for key in adapterKeys where Bool.random() { adapter[key] = randomValue(0) }
            if DeviceInfo(path: Self.device, device: ObjectCache.Properties(device), battery: ["Percentage": randomValue(0)]) != nil { decoded += 1 }
            _ = AdapterInfo(path: "/org/bluez/hci0", properties: ObjectCache.Properties(adapter))
        }
        // The address falls back to the object path, so every dictionary decodes.
        #expect(decoded == 3_000)
    }

    // MARK: - AdapterInfo

    @Test func adapterPropertiesDecodedExactly() {
        let info = AdapterInfo(path: "/org/bluez/hci1", properties: [
            "Address": .string("00:1a:7d:da:71:14"), "AddressType": .string("public"), "Name": .string("host #2"),
            "Alias": .string("desk"), "Class": .uint32(0x6C010C), "Powered": .boolean(false), "PowerState": .string("off-blocked"),
            "Discoverable": .boolean(true), "DiscoverableTimeout": .uint32(180), "Pairable": .boolean(false),
            "PairableTimeout": .uint32(0), "Discovering": .boolean(false), "Roles": .stringArray(["central"]),
            "UUIDs": .stringArray(["00001801-0000-1000-8000-00805f9b34fb", "?"]), "Modalias": .string("usb:v1D6Bp0246d0542"),
        ])
        #expect(info.name == "hci1")
        #expect(info.address == BluetoothAddress("00:1A:7D:DA:71:14"))
        #expect(info.addressType == "public")
        #expect(info.systemName == "host #2")
        #expect(info.alias == "desk")
        #expect(info.adapterClass == 0x6C010C)
        #expect(info.powered == false)
        #expect(info.powerState == "off-blocked")
        #expect(info.discoverable == true)
        #expect(info.discoverableTimeout == 180)
        #expect(info.pairable == false)
        #expect(info.pairableTimeout == 0)
        #expect(info.discovering == false)
        #expect(info.roles == ["central"])
        #expect(info.uuids == [BluetoothUUID("1801")!])
        #expect(info.modalias == "usb:v1D6Bp0246d0542")
    }

    /// BlueZ 5.66 without --experimental has no PowerState; odd types give nil as well.
    @Test func adapterAbsentOrOddPropertiesAreNil() {
        let info = AdapterInfo(path: "/org/bluez/hci0", properties: [
            "Address": .string("not an address"), "Powered": .string("on"), "Roles": .array(elementSignature: "i", [.int32(1)]),
            "Class": .int32(-5), "Discovering": .variant(.boolean(true)),
        ])
        #expect(info.address == nil && info.powered == nil && info.powerState == nil && info.roles == nil)
        #expect(info.adapterClass == nil && info.alias == nil && info.pairable == nil && info.discoverable == nil)
        #expect(info.discovering == true)
        #expect(info.uuids.isEmpty)
    }

    // MARK: - Adapter choice and the cache, against a fake bluetoothd

    static func adapters(_ powered: [String: Bool]) -> FakeBlueZ.Objects {
        var objects = FakeBlueZ.Objects()
        for (name, on) in powered {
            objects[ObjectPath("/org/bluez/" + name)] = [BlueZ.adapterInterface: ["Powered": .boolean(on), "Address": .string("00:AA:01:00:00:01")]]
        }
        return objects
    }

    @Test func presentAdapterIsTheNamedOneElseTheFirstPoweredElseTheFirst() async throws {
        let fake = try await FakeBlueZ.start(objects: Self.adapters(["hci0": false, "hci1": true, "hci2": false]))
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        #expect(try Adapter.present(in: session, named: nil).name == "hci1")
        #expect(try Adapter.present(in: session, named: "hci2").name == "hci2")   // powered off, still chosen
        #expect(throws: BLEError.unavailable(.noAdapter("hci3"), during: BLEOperation(.adapter))) { try Adapter.present(in: session, named: "hci3") }
        // The powered choice refuses what the present one accepts.
        #expect(throws: BLEError.unavailable(.poweredOff("hci2"), during: BLEOperation(.adapter))) { try Adapter.ready(in: session, named: "hci2") }
        #expect(Adapter.all(in: session).compactMap(\.info).map(\.name) == ["hci0", "hci1", "hci2"])
    }

    @Test func presentAdapterWhenNoneIsPoweredOrNoneIsThere() async throws {
        let fake = try await FakeBlueZ.start(objects: Self.adapters(["hci0": false, "hci1": false]))
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        #expect(try Adapter.present(in: session, named: nil).name == "hci0")
        #expect(throws: BLEError.unavailable(.poweredOff("hci0"), during: BLEOperation(.adapter))) { try Adapter.ready(in: session, named: nil) }

        let empty = try await FakeBlueZ.start(objects: [:])
        defer { empty.close() }
        let bare = try await empty.session()
        defer { bare.close() }
        #expect(throws: BLEError.unavailable(.noAdapter(nil), during: BLEOperation(.adapter))) { try Adapter.present(in: bare, named: nil) }
        #expect(Adapter.all(in: bare).isEmpty)
    }

    @Test func deviceInfosListOnlyThatAdaptersDevicesByAddress() async throws {
        var objects = Self.adapters(["hci0": true, "hci1": false])
        objects["/org/bluez/hci0/dev_C0_FF_EE_00_00_02"] = [BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:02"), "Paired": .boolean(true)]]
        objects["/org/bluez/hci0/dev_C0_FF_EE_00_00_01"] = [BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:01")],
                                                            BlueZ.batteryInterface: ["Percentage": .byte(9)]]
        objects["/org/bluez/hci1/dev_C0_FF_EE_00_00_03"] = [BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:03")]]
        let fake = try await FakeBlueZ.start(objects: objects)
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let hci0 = try Adapter.named("hci0", in: session)
        #expect(hci0.deviceInfos.map(\.address.description) == ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"])
        #expect(hci0.deviceInfos.map(\.batteryPercentage) == [9, nil])
        #expect(try Adapter.named("hci1", in: session).deviceInfos.map(\.adapterName) == ["hci1"])
        #expect(hci0.deviceInfo(BluetoothAddress("C0:FF:EE:00:00:02")!)?.paired == true)
        #expect(hci0.deviceInfo(BluetoothAddress("C0:FF:EE:00:00:03")!) == nil)
        // Known: no scan, even with no time for one.
        #expect(try await DeviceInfo.find(BluetoothAddress("C0:FF:EE:00:00:01")!, on: hci0, timeout: .zero).batteryPercentage == 9)
        await #expect(throws: BLEError.deviceNotFound(BluetoothAddress("C0:FF:EE:00:00:09")!)) {
            try await DeviceInfo.find(BluetoothAddress("C0:FF:EE:00:00:09")!, on: hci0, timeout: .zero)
        }
        #expect(fake.calls.withLock { $0.isEmpty })
    }
}
