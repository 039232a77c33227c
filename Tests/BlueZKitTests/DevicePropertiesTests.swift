import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

/// The Device1 property table: a record read from the cache's packed form is the one read
/// from the same properties decoded, and any change folded into a record is the record read
/// after that change.
@Suite(.cpuBound) struct DevicePropertiesTests {
    static let path = ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01")

    /// Each declared property, in the types BlueZ sends, other types, and variants.
    static let choices: [String: [DBusValue?]] = PackedPropertiesTests.advertisementChoices.merging([
        "Alias": [nil, .string("Kitchen"), .string("a name longer than fifteen bytes"), .int32(1)],
        "Icon": [nil, .string("input-keyboard"), .variant(.string("phone")), .boolean(true)],
        "Class": [nil, .uint32(0x240404), .int16(-1), .uint64(UInt64(UInt32.max) + 1)],
        "Paired": [nil, .boolean(true), .boolean(false), .string("yes")],
        "Bonded": [nil, .boolean(true), .variant(.boolean(false))],
        "Trusted": [nil, .boolean(false), .int32(0)],
        "Blocked": [nil, .boolean(true)],
        "ServicesResolved": [nil, .boolean(true), .byte(1)],
        "Modalias": [nil, .string("usb:v046Dp4023d0006"), .uint16(3)],
        "Adapter": [nil, .objectPath("/org/bluez/hci0"), .string("/org/bluez/hci1"), .variant(.objectPath("/org/bluez/hci2"))],
    ]) { first, _ in first }

    static func random(_ generator: inout some RandomNumberGenerator) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [:]
        for (name, values) in choices { properties[name] = values.randomElement(using: &generator)! }
        return properties
    }

    @Test func theTableDeclaresEveryPropertyTheChoicesCover() {
        #expect(Set(DeviceProperties.table.names) == Set(Self.choices.keys))
    }

    @Test func aRecordFromThePackedFormIsTheOneFromTheDictionary() {
        var generator = SplitMix64(seed: 0x5EED_0027)
        for _ in 0..<400 {
            let properties = Self.random(&generator)
            var fromDictionary = DeviceProperties()
            DeviceProperties.table.fold(properties, into: &fromDictionary)
            let fromPacked = DeviceProperties(ObjectCache.Properties(properties))
            #expect(fromPacked == fromDictionary, "\(properties)")
            let a = Advertisement(path: Self.path, properties: ObjectCache.Properties(properties))
            var b = Advertisement(path: Self.path, device: fromDictionary)
            b?.receivedAt = a?.receivedAt ?? .zero
            #expect(a == b)
        }
        // Typed values, as BlueZ sends them.
        let device = DeviceProperties(ObjectCache.Properties(PackedPropertiesTests.device1.merging([
            "Alias": .string("Kitchen"), "Adapter": .objectPath("/org/bluez/hci0"), "Class": .uint32(0x240404),
        ]) { _, new in new }))
        #expect(device.address?.description == "C0:FF:EE:00:00:01")
        #expect(device.alias == "Kitchen")
        #expect(device.adapter == ObjectPath("/org/bluez/hci0"))
        #expect(device.deviceClass == 0x240404)
        #expect(device.appearance == 0x03C1)
        #expect(device.manufacturerData == [0x004C: [0x02, 0x15, 0xFF], 0x05F1: []])
        // A device path that names no address, and no Address property: no advertisement.
        #expect(Advertisement(path: ObjectPath("/org/bluez/hci0/x"), device: DeviceProperties(["RSSI": .int16(1)])) == nil)
        #expect(Advertisement(path: Self.path, device: DeviceProperties(["RSSI": .int16(1)]))?.address.description == "C0:FF:EE:00:00:01")
    }

    /// Folding a PropertiesChanged into a record (any property, names outside the table,
    /// invalidated ones) gives the record read from the cache after the same change.
    @Test func aChangeFoldedIntoARecordIsTheRecordReadAfterIt() {
        var generator = SplitMix64(seed: 0x5EED_0028)
        let names = Array(Self.choices.keys) + ["NotABlueZName", "AdvertisingFlags"]
        for _ in 0..<600 {
            let base = Self.random(&generator)
            var change: [String: DBusValue] = [:]
            var invalidated: [String] = []
            for name in names where Int.random(in: 0..<4, using: &generator) == 0 {
                if Bool.random(using: &generator) {
                    change[name] = (Self.choices[name] ?? [.bytes([6])]).compactMap { $0 }.randomElement(using: &generator)!
                } else {
                    invalidated.append(name)
                }
            }
            var cached = ObjectCache.Properties(base)
            cached.fold(ObjectCache.Properties(change), invalidated: invalidated)
            var record = DeviceProperties(ObjectCache.Properties(base))
            record.fold(ObjectCache.Properties(change), invalidated: invalidated)
            #expect(record == DeviceProperties(cached), "\(base) + \(change) - \(invalidated)")
            // The advertisement's part alone, as a scan keeps it: the same advertisement.
            var part = DeviceProperties(advertisementIn: ObjectCache.Properties(base).packed)
            part.foldAdvertisement(ObjectCache.Properties(change), invalidated: invalidated)
            let fromPart = Advertisement(path: Self.path, device: part)
            var fromWhole = Advertisement(path: Self.path, device: record)
            fromWhole?.receivedAt = fromPart?.receivedAt ?? .zero
            #expect(fromPart == fromWhole, "\(base) + \(change) - \(invalidated)")
        }
    }
}

extension DeviceProperties {
    /// Test shorthand: the record of these decoded properties.
    init(_ properties: [String: DBusValue]) { self.init(ObjectCache.Properties(properties)) }
}
