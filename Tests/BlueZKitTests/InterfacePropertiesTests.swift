import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

/// The property tables of Adapter1, Battery1, GattService1, GattCharacteristic1 and
/// GattDescriptor1 (Device1's: DevicePropertiesTests): values in the types BlueZ sends decode
/// exactly, values of other types are nil, variants are looked through; a record read from
/// the cache's packed form is the one read from the same properties decoded, and a change
/// folded into a record is the record read after that change.
@Suite(.cpuBound) struct InterfacePropertiesTests {
    static let uuid180F = "0000180f-0000-1000-8000-00805f9b34fb"
    static let service: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010"
    static let characteristic: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"

    // MARK: - Choices: each declared property, in the types BlueZ sends, other types, variants

    static let adapterChoices: [String: [DBusValue?]] = [
        "Address": [nil, .string("00:1A:7D:DA:71:13"), .string("not an address"), .variant(.string("00:1A:7D:DA:71:14")), .int16(1)],
        "AddressType": [nil, .string("public"), .boolean(true)],
        "Name": [nil, .string("host #2"), .variant(.string("bench")), .uint32(2)],
        "Alias": [nil, .string("blesim-host"), .objectPath("/org/bluez")],
        "Class": [nil, .uint32(0x6C010C), .int32(-5), .uint64(UInt64(UInt32.max) + 1), .variant(.uint32(0))],
        "Powered": [nil, .boolean(true), .boolean(false), .string("on"), .variant(.boolean(true))],
        "PowerState": [nil, .string("off-blocked"), .string("on"), .byte(1)],
        "Discovering": [nil, .boolean(false), .int32(0)],
        "Pairable": [nil, .boolean(true), .byte(1)],
        "PairableTimeout": [nil, .uint32(0), .uint32(180), .string("0")],
        "Discoverable": [nil, .boolean(false), .variant(.variant(.boolean(true)))],
        "DiscoverableTimeout": [nil, .uint32(180), .int64(-1), .double(1)],
        "Roles": [nil, .stringArray(["central", "peripheral"]), .array(elementSignature: "s", []),
                  .array(elementSignature: "i", [.int32(1)]), .array(elementSignature: "v", [.variant(.string("central"))])],
        "UUIDs": [nil, .stringArray(["00001801-0000-1000-8000-00805f9b34fb", "?"]), .string("1801")],
        "Modalias": [nil, .string("usb:v1D6Bp0246d0542"), .uint16(3)],
        "Connectable": [nil, .boolean(true), .boolean(false), .string("yes")],
        "Manufacturer": [nil, .uint16(0x0002), .uint16(0xFFFF), .int32(-1), .variant(.uint16(10))],
        "Version": [nil, .byte(0x0B), .byte(0xFF), .string("5.2")],
        "ExperimentalFeatures": [nil, .stringArray(["671b10b5-42c0-4696-9227-eb28d1b049d6"]), .array(elementSignature: "s", []), .boolean(true)],
    ]

    static let batteryChoices: [String: [DBusValue?]] = [
        "Percentage": [nil, .byte(73), .byte(0), .int32(150), .variant(.byte(40)), .string("73")],
        "Source": [nil, .string("GATT Battery Service"), .string("HFP 1.7"), .int32(1)],
    ]

    static let serviceChoices: [String: [DBusValue?]] = [
        "UUID": [nil, .string(uuid180F), .string("180a"), .string("junk"), .variant(.string("1812")), .int16(1)],
        "Primary": [nil, .boolean(true), .boolean(false), .string("yes")],
        "Device": [nil, .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"), .string("/org/bluez/hci0")],
        "Includes": [nil, .array(elementSignature: "o", [.objectPath(service), .objectPath("/s2")]), .array(elementSignature: "o", []),
                     .array(elementSignature: "v", [.variant(.objectPath("/s3"))]), .stringArray(["/s4"]), .variant(.array(elementSignature: "o", [.objectPath("/s5")]))],
        "Handle": [nil, .uint16(0x0010), .uint32(0x1_0000), .int16(-1), .variant(.uint16(1)), .int32(12)],
    ]

    static let characteristicChoices: [String: [DBusValue?]] = [
        "UUID": [nil, .string("00002a19-0000-1000-8000-00805f9b34fb"), .string("x"), .boolean(false)],
        "Service": [nil, .objectPath(service), .string("/org/bluez")],
        "Flags": [nil, .stringArray(["read", "notify"]), .array(elementSignature: "s", []), .array(elementSignature: "v", [.variant(.string("read"))]),
                  .variant(.stringArray(["write"])), .string("read")],
        "Notifying": [nil, .boolean(true), .boolean(false), .uint16(1)],
        "WriteAcquired": [nil, .boolean(false), .variant(.boolean(true))],
        "NotifyAcquired": [nil, .boolean(true), .string("true")],
        "MTU": [nil, .uint16(517), .uint16(23), .int32(-1), .uint32(70_000)],
        "Handle": [nil, .uint16(0x0011), .variant(.uint16(0x0013))],
        "Value": [nil, .bytes([0x55]), .bytes([]), .array(elementSignature: "y", [.byte(1), .byte(2)]),
                  .array(elementSignature: "v", [.variant(.byte(1))]), .string("U"), .variant(.bytes([7]))],
    ]

    static let descriptorChoices: [String: [DBusValue?]] = [
        "UUID": [nil, .string("00002902-0000-1000-8000-00805f9b34fb"), .string("2902"), .uint16(0x2902)],
        "Characteristic": [nil, .objectPath(characteristic), .variant(.objectPath("/c")), .string("/c")],
        "Flags": [nil, .stringArray(["read", "write"]), .int32(3)],
        "Handle": [nil, .uint16(0x0012), .boolean(true)],
        "Value": [nil, .bytes([1, 0]), .int32(1)],
    ]

    static func random(_ choices: [String: [DBusValue?]], _ generator: inout some RandomNumberGenerator) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [:]
        for (name, values) in choices { properties[name] = values.randomElement(using: &generator)! }
        return properties
    }

    /// The table declares exactly the properties the choices cover; the packed form and the
    /// decoded one give the same record; a change folded into a record (any property, names
    /// outside the table, invalidated ones) is the record read after the same change.
    static func check<Record: InterfaceProperties>(_ table: PropertyTable<Record>, _ choices: [String: [DBusValue?]], seed: UInt64) {
        #expect(Set(table.names) == Set(choices.keys))
        #expect(Record.propertyNames == table.names)
        var generator = SplitMix64(seed: seed)
        let names = Array(choices.keys) + ["NotABlueZName", "CablePairing"]
        for _ in 0..<300 {
            let base = random(choices, &generator)
            var fromDictionary = Record()
            table.fold(base, into: &fromDictionary)
            #expect(Record(ObjectCache.Properties(base)) == fromDictionary, "\(base)")

            var change: [String: DBusValue] = [:]
            var invalidated: [String] = []
            for name in names where Int.random(in: 0..<4, using: &generator) == 0 {
                if Bool.random(using: &generator) {
                    change[name] = (choices[name] ?? [.bytes([6])]).compactMap { $0 }.randomElement(using: &generator)!
                } else {
                    invalidated.append(name)
                }
            }
            var cached = ObjectCache.Properties(base)
            cached.fold(ObjectCache.Properties(change), invalidated: invalidated)
            var record = Record(ObjectCache.Properties(base))
            record.fold(ObjectCache.Properties(change), invalidated: invalidated)
            #expect(record == Record(cached), "\(base) + \(change) - \(invalidated)")
        }
    }

    @Test func everyTableReadsThePackedFormAsTheDecodedOneAndFoldsChanges() {
        Self.check(AdapterProperties.table, Self.adapterChoices, seed: 0x5EED_0101)
        Self.check(BatteryProperties.table, Self.batteryChoices, seed: 0x5EED_0102)
        Self.check(GATTServiceProperties.table, Self.serviceChoices, seed: 0x5EED_0103)
        Self.check(GATTCharacteristicProperties.table, Self.characteristicChoices, seed: 0x5EED_0104)
        Self.check(GATTDescriptorProperties.table, Self.descriptorChoices, seed: 0x5EED_0105)
    }

    // MARK: - Exact values

    @Test func adapterValuesInBlueZsTypesAndOthers() {
        let adapter = AdapterProperties([
            "Address": .string("00:1a:7d:da:71:14"), "Name": .variant(.string("host #2")), "Class": .uint32(0x6C010C),
            "Powered": .variant(.boolean(false)), "PowerState": .byte(1), "DiscoverableTimeout": .uint32(180),
            "Roles": .stringArray(["central", "peripheral"]), "UUIDs": .stringArray(["1801", "?"]), "Pairable": .string("yes"),
        ])
        #expect(adapter.address == BluetoothAddress("00:1A:7D:DA:71:14"))
        #expect(adapter.systemName == "host #2")
        #expect(adapter.adapterClass == 0x6C010C)
        #expect(adapter.powered == false)
        #expect(adapter.powerState == nil)
        #expect(adapter.discoverableTimeout == 180)
        #expect(adapter.roles == ["central", "peripheral"])
        #expect(adapter.uuids == [BluetoothUUID("1801")!])
        #expect(adapter.pairable == nil)
        #expect(AdapterProperties(["Roles": .array(elementSignature: "v", [.variant(.string("central"))])]).roles == nil)
    }

    @Test func batteryValuesInBlueZsTypesAndOthers() {
        #expect(BatteryProperties(["Percentage": .byte(73), "Source": .string("GATT Battery Service")])
            == BatteryProperties(percentage: 73, source: "GATT Battery Service"))
        // Out of range is kept, for the caller to report as such.
        #expect(BatteryProperties(["Percentage": .variant(.int32(150))]).percentage == 150)
        #expect(BatteryProperties(["Percentage": .string("73"), "Source": .int32(1)]) == BatteryProperties())
    }

    @Test func gattValuesInBlueZsTypesAndOthers() {
        let service = GATTServiceProperties([
            "UUID": .string(Self.uuid180F), "Primary": .boolean(false), "Device": .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"),
            "Includes": .array(elementSignature: "o", [.objectPath("/s2")]), "Handle": .uint16(0x0010),
        ])
        #expect(service.uuid == BluetoothUUID("180f"))
        #expect(service.primary == false)
        #expect(service.device == ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"))
        #expect(service.includes == [ObjectPath("/s2")])
        #expect(service.handle == 0x0010)
        #expect(GATTServiceProperties(["UUID": .string("junk"), "Handle": .uint32(0x1_0000), "Includes": .stringArray(["/s"])])
            == GATTServiceProperties())

        let characteristic = GATTCharacteristicProperties([
            "UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(Self.service),
            "Flags": .stringArray(["read", "notify"]), "Notifying": .boolean(true), "NotifyAcquired": .boolean(false),
            "MTU": .uint16(517), "Handle": .uint16(0x0011), "Value": .bytes([0x55]), "WriteAcquired": .string("no"),
        ])
        #expect(characteristic.uuid == BluetoothUUID("2a19"))
        #expect(characteristic.service == Self.service)
        #expect(characteristic.flags == ["read", "notify"])
        #expect(characteristic.notifying == true && characteristic.notifyAcquired == false && characteristic.writeAcquired == nil)
        #expect(characteristic.mtu == 517 && characteristic.handle == 0x0011)
        #expect(characteristic.value == [0x55])
        #expect(GATTCharacteristicProperties(["Value": .array(elementSignature: "y", [.byte(1), .byte(2)])]).value == [1, 2])

        let descriptor = GATTDescriptorProperties([
            "UUID": .variant(.string("2902")), "Characteristic": .objectPath(Self.characteristic), "Handle": .uint16(0x0012),
            "Flags": .stringArray(["read", "write"]),
        ])
        #expect(descriptor.uuid == BluetoothUUID("2902"))
        #expect(descriptor.characteristic == Self.characteristic)
        #expect(descriptor.handle == 0x0012 && descriptor.flags == ["read", "write"] && descriptor.value == nil)
    }

    /// The GATT tree is read through the tables: UUIDs, Primary and Flags as before.
    @Test func theGATTTreeIsReadThroughTheTables() {
        var cache = ObjectCache()
        cache.load(managedObjects: FakeBlueZ.managedObjects(FakeBlueZ.connectedDevice.merging([
            FakeBlueZ.characteristic.appending("desc0013"): [BlueZ.gattDescriptorInterface: [
                "UUID": .string("00002902-0000-1000-8000-00805f9b34fb"), "Characteristic": .objectPath(FakeBlueZ.characteristic)]],
            FakeBlueZ.device.appending("service0020"): [BlueZ.gattServiceInterface: ["UUID": .string("not a uuid"), "Primary": .boolean(true)]],
        ]) { first, _ in first }))
        let battery = BluetoothUUID("180f")!, level = BluetoothUUID("2a19")!
        #expect(cache.gattServices(of: FakeBlueZ.device) == [
            GATTService(path: FakeBlueZ.service, uuid: battery, primary: true, characteristics: [
                GATTCharacteristic(path: FakeBlueZ.characteristic, uuid: level, service: battery, flags: ["read", "notify"], descriptors: [
                    GATTDescriptor(path: FakeBlueZ.characteristic.appending("desc0013"), uuid: BluetoothUUID("2902")!,
                                   characteristic: level, service: battery),
                ]),
            ]),
        ])
        #expect(cache.hasGATTService(battery, under: FakeBlueZ.device))
        #expect(!cache.hasGATTService(level, under: FakeBlueZ.device))
    }
}

extension BatteryProperties {
    init(percentage: Int?, source: String?) {
        self.init()
        self.percentage = percentage
        self.source = source
    }
}
