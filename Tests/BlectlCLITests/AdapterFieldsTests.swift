import DBusKit
import Testing
@testable import BlectlCLI
@testable import BlueZKit

/// `adapters`' records are made from BlueZKit's table of Adapter1 properties: a property
/// declared there shows in them with no change to the command.
@Suite("adapter records: made from the Adapter1 table")
struct AdapterFieldsTests {
    /// The adapter's name, then every declared property but those `adapters` has never
    /// shown, in the table's order: the fields scripts know.
    @Test func adaptersShowsTheDeclaredProperties() {
        let shown = AdapterProperties.table.names.filter { !AdaptersCommand.notShown.contains($0) }.map(PropertyFields.snakeCase)
        #expect(shown == ["address", "alias", "powered", "power_state", "discovering", "pairable", "discoverable", "roles",
                          "connectable", "manufacturer", "version", "experimental_features"])
        // Manufacturer and Version are each followed by their name.
        #expect(AdaptersCommand.layout.fields.map(\.key) == ["name", "address", "alias", "powered", "power_state", "discovering",
                                                             "pairable", "discoverable", "roles", "connectable", "manufacturer",
                                                             "manufacturer_name", "version", "version_name", "experimental_features"])
        #expect(AdaptersCommand.notShown.isSubset(of: AdapterProperties.table.names))
    }

    /// A property added to the table: in JSON after the others, in the text table before ALIAS.
    @Test func aPropertyAddedShowsInJSONAndText() {
        let table = PropertyTable<AdapterProperties>(AdapterProperties.table.declarations + [.init("NewProperty", \.discoverable)])
        let layout = AdaptersCommand.layout(declaring: table)
        let columns = AdaptersCommand.columns(of: layout)
        let info = AdapterInfo(path: "/org/bluez/hci0", properties: ["Discoverable": .boolean(true), "Roles": .stringArray(["central"])])
        #expect(layout.object(info).serialized()
            == #"{"name":"hci0","address":null,"alias":null,"powered":null,"power_state":null,"discovering":null,"pairable":null,"discoverable":true,"roles":["central"],"connectable":null,"manufacturer":null,"manufacturer_name":null,"version":null,"version_name":null,"experimental_features":null,"new_property":true}"#)
        #expect(columns.headers == ["NAME", "ADDRESS", "POWERED", "POWER_STATE", "DISCOVERING", "PAIRABLE", "DISCOVERABLE", "ROLES",
                                    "CONNECTABLE", "MANUFACTURER", "MANUFACTURER_NAME", "VERSION", "VERSION_NAME",
                                    "EXPERIMENTAL_FEATURES", "NEW_PROPERTY", "ALIAS"])
        #expect(columns.cells(info) == ["hci0", "-", "-", "-", "-", "-", "yes", "central", "-", "-", "-", "-", "-", "-", "yes", "-"])
    }

    /// BlueZ 5.82's controller facts: Manufacturer and Version with their names.
    @Test func controllerFacts() {
        let info = AdapterInfo(path: "/org/bluez/hci0", properties: [
            "Connectable": .boolean(true), "Manufacturer": .uint16(0x0002), "Version": .byte(0x0B),
            "ExperimentalFeatures": .stringArray(["671b10b5-42c0-4696-9227-eb28d1b049d6"]),
        ])
        #expect(AdaptersCommand.record(info).serialized()
            == #"{"name":"hci0","address":null,"alias":null,"powered":null,"power_state":null,"discovering":null,"pairable":null,"discoverable":null,"roles":null,"connectable":true,"manufacturer":2,"manufacturer_name":"Intel Corp.","version":11,"version_name":"5.2","experimental_features":["671b10b5-42c0-4696-9227-eb28d1b049d6"]}"#)
        let unknown = AdapterInfo(path: "/org/bluez/hci0", properties: ["Manufacturer": .uint16(0xFFFE), "Version": .byte(0x40)])
        #expect(AdaptersCommand.record(unknown).serialized().contains(#""manufacturer":65534,"manufacturer_name":null,"version":64,"version_name":null"#))
    }

    /// The shapes the other interfaces' properties take, shown by their type: a UUID, a list
    /// of strings or of object paths, bytes.
    @Test func valuesOfTheOtherShapes() {
        struct Record: Sendable {
            var uuid: BluetoothUUID?, flags: [String]?, includes: [ObjectPath]?, value: [UInt8]?
        }
        let table = PropertyTable<Record>([
            .init("UUID", \.uuid), .init("Flags", \.flags), .init("Includes", \.includes), .init("Value", \.value),
        ])
        var record = Record()
        table.fold(["UUID": .string("0000180f-0000-1000-8000-00805f9b34fb"), "Flags": .stringArray(["read", "notify\u{1}"]),
                    "Includes": .array(elementSignature: "o", [.objectPath("/s1"), .objectPath("/s2")]), "Value": .bytes([0x55, 0x01])],
                   into: &record)
        let values = table.declarations.map { $0.value(record) }
        #expect(values.map { PropertyFields.json($0).serialized() } == [#""180f""#, #"["read","notify\u0001"]"#, #"["/s1","/s2"]"#, #""5501""#])
        #expect(values.map(PropertyFields.text) == ["180f (Battery)", "read, notify?", "/s1, /s2", "5501"])
        #expect(values.map(PropertyFields.cell) == ["180f", "read,notify?", "/s1,/s2", "5501"])
        let absent = table.declarations.map { $0.value(Record()) }
        #expect(absent.map { PropertyFields.json($0).serialized() } == ["null", "null", "null", "null"])
        #expect(absent.map(PropertyFields.text) == ["-", "-", "-", "-"])
        #expect(PropertyFields.text(.strings([])) == "-" && PropertyFields.text(.bytes([])) == "(empty)")
    }
}
