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
        #expect(AdaptersCommand.layout.fields.map(\.key) == ["name"] + shown)
        #expect(shown == ["address", "alias", "powered", "power_state", "discovering", "pairable", "discoverable", "roles"])
        #expect(AdaptersCommand.notShown.isSubset(of: AdapterProperties.table.names))
    }

    /// A property added to the table: in JSON after the others, in the text table before ALIAS.
    @Test func aPropertyAddedShowsInJSONAndText() {
        let table = PropertyTable<AdapterProperties>(AdapterProperties.table.declarations + [.init("Connectable", \.discoverable)])
        let layout = AdaptersCommand.layout(declaring: table)
        let columns = AdaptersCommand.columns(of: layout)
        let info = AdapterInfo(path: "/org/bluez/hci0", properties: ["Discoverable": .boolean(true), "Roles": .stringArray(["central"])])
        #expect(layout.object(info).serialized()
            == #"{"name":"hci0","address":null,"alias":null,"powered":null,"power_state":null,"discovering":null,"pairable":null,"discoverable":true,"roles":["central"],"connectable":true}"#)
        #expect(columns.headers == ["NAME", "ADDRESS", "POWERED", "POWER_STATE", "DISCOVERING", "PAIRABLE", "DISCOVERABLE", "ROLES", "CONNECTABLE", "ALIAS"])
        #expect(columns.cells(info) == ["hci0", "-", "-", "-", "-", "-", "yes", "central", "yes", "-"])
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
