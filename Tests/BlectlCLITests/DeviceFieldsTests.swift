import DBusKit
import Testing
@testable import BlectlCLI
@testable import BlueZKit

/// The device records (`scan`, `info`, `devices`) are made from BlueZKit's table of Device1
/// properties: a property declared there shows in them with no change to the records.
@Suite("device records: made from the Device1 table")
struct DeviceFieldsTests {
    @Test("D-Bus names to JSON keys", arguments: [
        ("Address", "address"), ("AddressType", "address_type"), ("RSSI", "rssi"), ("TxPower", "tx_power"),
        ("UUIDs", "uuids"), ("ServicesResolved", "services_resolved"), ("ManufacturerData", "manufacturer_data"),
        ("Class", "class"), ("AdvertisingFlags", "advertising_flags"), ("WakeAllowed", "wake_allowed"),
        ("LegacyPairing", "legacy_pairing"), ("PreferredBearer", "preferred_bearer"),
    ])
    func snakeCase(_ name: String, _ key: String) {
        #expect(PropertyFields.snakeCase(name) == key)
    }

    /// `info` shows every declared property (Adapter as the adapter's name), in the table's
    /// order, then Battery1's percentage and the adapter.
    @Test func infoShowsEveryDeclaredProperty() {
        var declared = DeviceProperties.table.names.filter { $0 != "Adapter" }.map(PropertyFields.snakeCase)
        declared.insert("decoded", at: declared.firstIndex(of: "service_data")! + 1)
        #expect(InfoCommand.layout.fields.map(\.key) == declared + ["battery_percentage", "adapter"])
    }

    /// `scan` shows the properties declared for advertisements (but Alias, which only its
    /// name filter reads), in the table's order, with the SIG's names beside the data, then
    /// connected, the adapter, the time, and when this scan first and last heard the device.
    @Test func scanShowsTheAdvertisementsProperties() {
        var keys = DeviceProperties.advertisementTable.names.filter { $0 != "Connected" && $0 != "Alias" }.map(PropertyFields.snakeCase)
        keys.insert("company", at: keys.firstIndex(of: "manufacturer_data")! + 1)
        keys.insert("service_names", at: keys.firstIndex(of: "service_data")! + 1)
        keys.insert("decoded", at: keys.firstIndex(of: "service_names")! + 1)
        #expect(ScanCommand.layout(adapter: "hci0").fields.map(\.key) == keys + ["connected", "adapter", "time", "first_seen", "last_seen"])
    }

    /// A property added to the table, of each shape BlueZ's values take, shows in the records
    /// by its type: JSON the value (a list or dictionary empty when absent, else null), text
    /// the value for people (`-` when absent), a table's cell its compact form.
    @Test func aPropertyDeclaredShowsByItsType() throws {
        struct Record: Sendable {
            var flags: UInt16?, icon: String?, wake: Bool?, uuids: [BluetoothUUID]?, data: [UInt16: [UInt8]]?
        }
        let table = PropertyTable<Record>([
            .init("AdvertisingFlags", \.flags), .init("Icon", \.icon), .init("WakeAllowed", \.wake),
            .init("UUIDs", \.uuids), .init("ManufacturerData", \.data),
        ])
        var record = Record()
        table.fold(["AdvertisingFlags": .byte(6), "Icon": .string("phone\u{1}"), "WakeAllowed": .boolean(true),
                    "UUIDs": .stringArray(["180f", "feed"]),
                    "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(0x05F1), .variant(.bytes([1, 2])))])],
                   into: &record)
        let shown = table.declarations.map { d in
            (PropertyFields.snakeCase(d.name), PropertyFields.json(d.value(record)).serialized(), PropertyFields.text(d.value(record)),
             PropertyFields.cell(d.value(record)))
        }
        #expect(shown.map(\.0) == ["advertising_flags", "icon", "wake_allowed", "uuids", "manufacturer_data"])
        #expect(shown.map(\.1) == ["6", #""phone\u0001""#, "true", #"["180f","feed"]"#, #"{"05f1":"0102"}"#])
        #expect(shown.map(\.2) == ["6", "phone?", "yes", "180f (Battery), feed (Tile, Inc.)", "05f1=0102"])
        #expect(shown.map(\.3) == ["6", "phone?", "yes", "180f,feed", "05f1=0102"])
        let absent = table.declarations.map { d in
            (PropertyFields.json(d.value(Record())).serialized(), PropertyFields.text(d.value(Record())))
        }
        #expect(absent.map(\.0) == ["null", "null", "null", "[]", "{}"])
        #expect(absent.map(\.1) == ["-", "-", "-", "-", "-"])
    }

    /// A JSON line is the record's object serialized, byte for byte, for a record of no
    /// fields too.
    @Test func aLineIsTheObjectSerialized() {
        let empty = RecordLayout<Int>([])
        #expect(empty.line(1) == "{}\n")
        let two = RecordLayout<Int>([
            RecordField("n", json: { .int($0) }, text: { String($0) }),
            RecordField("quoted \"key\"", json: { .string("\($0)\n") }, text: { _ in "" }),
        ])
        #expect(two.line(-7) == two.object(-7).serialized() + "\n")
        #expect(two.object(-7).serialized() == #"{"n":-7,"quoted \"key\"":"-7\n"}"#)

        // Constant fields, written once into the layout's bytes: first, between, last, alone.
        let constants = RecordLayout<Int>([
            RecordField("a", constant: "x\"", text: "x"),
            RecordField("n", json: { $0 }, text: { String($0) }),
            RecordField("b", constant: 5, text: "5"),
            RecordField("m", json: { $0 == 0 ? nil : $0 }, text: { String($0) }),
            RecordField("c", constant: JSONValue.object([("k", .null)]), text: ""),
        ])
        for n in [0, 3] {
            #expect(constants.line(n) == constants.object(n).serialized() + "\n")
        }
        #expect(constants.line(3) == #"{"a":"x\"","n":3,"b":5,"m":3,"c":{"k":null}}"# + "\n")
        let alone = RecordLayout<Int>([RecordField("only", constant: true, text: "yes")])
        #expect(alone.line(1) == #"{"only":true}"# + "\n")
    }

    /// A table's columns: those it places, in its order; a field it does not place under its
    /// key in capitals, before the column named (else at the end); omitted fields nowhere.
    @Test func columnsNotPlacedComeWhereTheTableSays() {
        let layout = RecordLayout<Int>(["a", "b", "c", "d"].map { key in
            RecordField(key, json: { .int($0) }, text: { "\(key)\($0)" })
        })
        let before = TextColumns(layout, [("A", .field("a"), 3), ("LAST", .custom({ _ in "z" }), 0)], othersBefore: "LAST", omitted: ["c"])
        #expect(before.headers == ["A", "B", "D", "LAST"])
        #expect(before.widths == [3, 1, 1, 0])
        #expect(before.cells(4) == ["a4", "b4", "d4", "z"])
        let atEnd = TextColumns(layout, [("D", .field("d"), 0)])
        #expect(atEnd.headers == ["D", "A", "B", "C"])
    }
}
