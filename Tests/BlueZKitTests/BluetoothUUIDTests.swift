import FoundationEssentials
import Testing
@testable import BlueZKit

@Suite("BluetoothUUID")
struct BluetoothUUIDTests {
    @Test("accepts 16-, 32- and 128-bit forms", arguments: [
        ("180f", "0000180f-0000-1000-8000-00805f9b34fb"),
        ("180F", "0000180f-0000-1000-8000-00805f9b34fb"),
        ("0x180F", "0000180f-0000-1000-8000-00805f9b34fb"),
        ("0X180f", "0000180f-0000-1000-8000-00805f9b34fb"),
        ("0000", "00000000-0000-1000-8000-00805f9b34fb"),
        ("ffff", "0000ffff-0000-1000-8000-00805f9b34fb"),
        ("0000180f", "0000180f-0000-1000-8000-00805f9b34fb"),
        ("0x0000180F", "0000180f-0000-1000-8000-00805f9b34fb"),
        ("1234ABCD", "1234abcd-0000-1000-8000-00805f9b34fb"),
        ("0000180F-0000-1000-8000-00805F9B34FB", "0000180f-0000-1000-8000-00805f9b34fb"),
        ("6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
        ("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"),
    ])
    func parsesValid(input: String, canonical: String) throws {
        let uuid = try #require(BluetoothUUID(input))
        #expect(uuid.description == canonical)
    }

    @Test("rejects malformed UUIDs", arguments: [
        "",                                         // empty
        "0x",                                       // prefix only
        "18f",                                      // 3 digits
        "180f0",                                    // 5 digits
        "0000180",                                  // 7 digits
        "0000180f0",                                // 9 digits
        "0x18f",                                    // prefix + 3 digits
        "180g",                                     // non-hex
        "xyz",                                      // non-hex, wrong length
        "0x0x180f",                                 // double prefix
        " 180f",                                    // leading space
        "180f ",                                    // trailing space
        "+180f",                                    // sign
        "-180",                                     // sign
        "１８０f",                                   // full-width digits
        "0000180f00001000800000805f9b34fb",         // 128-bit without dashes
        "0000180f-0000-1000-8000-00805f9b34f",      // 128-bit, one digit short
        "0000180f-0000-1000-8000-00805f9b34fbb",    // 128-bit, one digit long
        "0000180f0-000-1000-8000-00805f9b34fb",     // dash moved
        "0000180f-0000-1000-8000_00805f9b34fb",     // underscore for dash
        "0000180f--000-1000-8000-00805f9b34fb",     // doubled dash
        "0000180f-0000-1000-8000-00805f9b34fg",     // non-hex in 128-bit
        "{0000180f-0000-1000-8000-00805f9b34fb}",   // braces
        "0x0000180f-0000-1000-8000-00805f9b34fb",   // prefix on 128-bit
        "180f-",                                    // dash on short form
    ])
    func rejectsMalformed(input: String) {
        #expect(BluetoothUUID(input) == nil)
    }

    @Test("uuid16 and shortString", arguments: [
        ("180f", UInt16?(0x180F), "180f"),
        ("0x2A19", UInt16?(0x2A19), "2a19"),
        ("0000000a", UInt16?(0x000A), "000a"),
        ("0001180f", UInt16?.none, "0001180f-0000-1000-8000-00805f9b34fb"),
        ("6e400001-b5a3-f393-e0a9-e50e24dcca9e", UInt16?.none, "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
        ("0000180f-0000-1000-8000-00805f9b34fc", UInt16?.none, "0000180f-0000-1000-8000-00805f9b34fc"),
    ])
    func shortForms(input: String, uuid16: UInt16?, short: String) throws {
        let uuid = try #require(BluetoothUUID(input))
        #expect(uuid.uuid16 == uuid16)
        #expect(uuid.shortString == short)
    }

    @Test("init(uuid16:)", arguments: [
        (UInt16(0x0000), "00000000-0000-1000-8000-00805f9b34fb"),
        (UInt16(0x000A), "0000000a-0000-1000-8000-00805f9b34fb"),
        (UInt16(0x180F), "0000180f-0000-1000-8000-00805f9b34fb"),
        (UInt16(0xFFFF), "0000ffff-0000-1000-8000-00805f9b34fb"),
    ])
    func fromUUID16(value: UInt16, canonical: String) {
        let uuid = BluetoothUUID(uuid16: value)
        #expect(uuid.description == canonical)
        #expect(uuid.uuid16 == value)
        #expect(BluetoothUUID(canonical) == uuid)
    }

    @Test func wellKnownConstants() {
        #expect(BluetoothUUID.batteryService.description == "0000180f-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID.batteryLevel.uuid16 == 0x2A19)
        #expect(BluetoothUUID.deviceInformation.uuid16 == 0x180A)
        #expect(BluetoothUUID.firmwareRevision.uuid16 == 0x2A26)
        #expect(BluetoothUUID.hardwareRevision.uuid16 == 0x2A27)
        #expect(BluetoothUUID.softwareRevision.uuid16 == 0x2A28)
        #expect(BluetoothUUID.manufacturerName.uuid16 == 0x2A29)
        #expect(BluetoothUUID.modelNumber.uuid16 == 0x2A24)
        #expect(BluetoothUUID.genericAccess.uuid16 == 0x1800)
        #expect(BluetoothUUID.genericAttribute.uuid16 == 0x1801)
        #expect(BluetoothUUID.clientCharacteristicConfiguration.uuid16 == 0x2902)
    }

    @Test func equalityAcrossForms() throws {
        let forms = ["180f", "0x180F", "0000180F", "0000180f-0000-1000-8000-00805F9B34FB"]
        let uuids = try forms.map { try #require(BluetoothUUID($0)) }
        #expect(Set(uuids) == [BluetoothUUID.batteryService])
    }

    @Test func codesAsCanonicalString() throws {
        let data = try JSONEncoder().encode([BluetoothUUID.batteryLevel])
        #expect(String(decoding: data, as: UTF8.self) == #"["00002a19-0000-1000-8000-00805f9b34fb"]"#)
        let decoded = try JSONDecoder().decode([BluetoothUUID].self, from: Data(#"["2A19", "0x180a"]"#.utf8))
        #expect(decoded == [.batteryLevel, .deviceInformation])
    }

    @Test("decoding rejects non-UUIDs", arguments: [#"["18f"]"#, #"[""]"#, "[6169]", "[null]"])
    func decodingRejects(json: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([BluetoothUUID].self, from: Data(json.utf8))
        }
    }
}

@Suite("AssignedNumbers")
struct AssignedNumbersTests {
    // The SIG's current names (uuids/service_uuids.yaml): "GAP", "GATT", "Battery".
    @Test("names common SIG UUIDs", arguments: [
        (UInt16(0x1800), "GAP"),
        (UInt16(0x1801), "GATT"),
        (UInt16(0x1805), "Current Time"),
        (UInt16(0x180A), "Device Information"),
        (UInt16(0x180D), "Heart Rate"),
        (UInt16(0x180F), "Battery"),
        (UInt16(0x1812), "Human Interface Device"),
        (UInt16(0x181A), "Environmental Sensing"),
        (UInt16(0x2A00), "Device Name"),
        (UInt16(0x2A01), "Appearance"),
        (UInt16(0x2A05), "Service Changed"),
        (UInt16(0x2A19), "Battery Level"),
        (UInt16(0x2A24), "Model Number String"),
        (UInt16(0x2A25), "Serial Number String"),
        (UInt16(0x2A26), "Firmware Revision String"),
        (UInt16(0x2A27), "Hardware Revision String"),
        (UInt16(0x2A28), "Software Revision String"),
        (UInt16(0x2A29), "Manufacturer Name String"),
        (UInt16(0x2A50), "PnP ID"),
        (UInt16(0x2901), "Characteristic User Description"),
        (UInt16(0x2902), "Client Characteristic Configuration"),
        // Member services (uuids/member_uuids.yaml) are named after the member.
        (UInt16(0xFE9F), "Google LLC"),
        // LaTeX markup in the SIG's YAML comes out as plain text.
        (UInt16(0x2B8C), "CO2 Concentration"),
    ])
    func names(uuid16: UInt16, name: String) {
        #expect(AssignedNumbers.name(for: BluetoothUUID(uuid16: uuid16)) == name)
    }

    @Test func unknownAndNonBaseUUIDsHaveNoName() throws {
        #expect(AssignedNumbers.name(for: BluetoothUUID(uuid16: 0x0042)) == nil)
        // 0x180F's digits on a vendor base are not the Battery Service.
        let vendor = try #require(BluetoothUUID("0000180f-b5a3-f393-e0a9-e50e24dcca9e"))
        #expect(AssignedNumbers.name(for: vendor) == nil)
        // A 32-bit UUID whose low half is 0x180F is not the Battery Service either.
        let wide = try #require(BluetoothUUID("0001180f"))
        #expect(AssignedNumbers.name(for: wide) == nil)
    }

    @Test("names company identifiers", arguments: [
        (UInt16(0x0000), "Ericsson AB"),
        (UInt16(0x004C), "Apple, Inc."),
        (UInt16(0x05F1), "The Linux Foundation"),
        // Names outside ASCII come through as UTF-8.
        (UInt16(0x0370), "Wazombi Labs O\u{DC}"),
    ])
    func companies(identifier: UInt16, name: String) {
        #expect(AssignedNumbers.companyName(for: identifier) == name)
    }

    @Test func unassignedCompanyHasNoName() {
        #expect(AssignedNumbers.companyName(for: 0xFFFF) == nil)
    }

    @Test("names appearance categories and subcategories", arguments: [
        (UInt16(0x0000), "Unknown", String?.none),
        (UInt16(0x03C0), "Human Interface Device", String?.none),
        (UInt16(0x03C1), "Human Interface Device", "Keyboard"),
        (UInt16(0x03C2), "Human Interface Device", "Mouse"),
        (UInt16(0x0540), "Sensor", String?.none),
        (UInt16(0x0541), "Sensor", "Motion Sensor"),
        (UInt16(0x0080), "Computer", String?.none),
        (UInt16(0x0083), "Computer", "Laptop"),
        // Subcategory 0x3F of HID is not assigned: the category still is.
        (UInt16(0x03FF), "Human Interface Device", String?.none),
    ])
    func appearance(value: UInt16, category: String, subcategory: String?) {
        let names = AssignedNumbers.appearanceNames(for: value)
        #expect(names.category == category)
        #expect(names.subcategory == subcategory)
    }

    @Test func unassignedAppearanceCategoryHasNoNames() {
        // Category 0x3FF (value 0xFFC1) is not assigned; its subcategory is not named either.
        let names = AssignedNumbers.appearanceNames(for: 0xFFC1)
        #expect(names.category == nil)
        #expect(names.subcategory == nil)
    }

    @Test("every generated table is sorted, with one offset per name and clean names")
    func tablesAreWellFormed() {
        let tables = [AssignedNumbers.uuid16Names, AssignedNumbers.companyNames,
                      AssignedNumbers.appearanceCategoryNames, AssignedNumbers.appearanceSubcategoryNames]
        for table in tables {
            #expect(table.offsets.count == table.count + 1)
            #expect(zip(table.keys, table.keys.dropFirst()).allSatisfy { $0 < $1 })
            #expect(Int(table.offsets.last!) == table.names.utf8CodeUnitCount + 1)
            for key in table.keys {
                let name = table.name(for: key) ?? ""
                #expect(!name.isEmpty && !name.contains("\n") && name.first != " " && name.last != " ", "\(key): \(name)")
            }
        }
        // Sizes of the SIG data this table was made from (bluetooth-sig 0.6.0); a new pin changes them.
        #expect(AssignedNumbers.companyNames.count == 4008)
        #expect(AssignedNumbers.uuid16Names.count == 1300)
        #expect(AssignedNumbers.appearanceCategoryNames.count == 55)
    }
}
