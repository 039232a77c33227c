import DBusKit

/// One D-Bus property of a BlueZ interface and the field of `Record` it goes to: the one
/// declaration from which the typed record is read, from the object cache or from a signal, a
/// change of the property is folded into it, and blectl's records show it.
package struct PropertyDeclaration<Record>: Sendable {
    /// The D-Bus property name, as the interface's doc spells it (`"RSSI"`).
    package let name: String
    /// The records it goes to (besides the whole record).
    package let uses: PropertyUses
    /// The field's value in one of the shapes BlueZ's values take: nil when the record has
    /// none, except for a list or a dictionary (UUIDs, ManufacturerData), which is then empty.
    package let value: @Sendable (Record) -> ReflectedPropertyValue?
    fileprivate let assign: @Sendable (inout Record, DBusValue?) -> Void
    fileprivate let copy: @Sendable (inout Record, Record) -> Void
    fileprivate let assignPacked: @Sendable (inout Record, inout PackedReader) -> Void

    /// Property `name` is stored in `field` (nil when absent, invalidated, or of another D-Bus
    /// type) and goes to the records `uses`: `.init("RSSI", \.rssi, in: .advertisement)`.
    init<Value: PropertyValue>(_ name: String, _ field: WritableKeyPath<Record, Value?> & Sendable,
                               in uses: PropertyUses = []) {
        self.name = name
        self.uses = uses
        value = { ($0[keyPath: field] ?? Value.none)?.reflected }
        copy = { $0[keyPath: field] = $1[keyPath: field] }
        assign = { record, value in record[keyPath: field] = value.flatMap { Value(propertyValue: $0) } }
        assignPacked = { record, reader in record[keyPath: field] = Value(packedValue: &reader) }
    }
}

/// The records a property goes to besides the whole typed record: a reader that needs only
/// those decodes only them (a scan reads a device's advertisement at every sighting).
package struct PropertyUses: OptionSet, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// ``Advertisement``: what a scan reports.
    package static let advertisement = PropertyUses(rawValue: 1)
}

/// The properties of one BlueZ interface, declared once (in the spirit of BlueR's
/// `define_properties!`): the table reads a typed record from an object's properties and
/// folds PropertiesChanged into it. Properties not declared are ignored. Immutable, and a
/// class so that a reader shares it rather than copying its arrays (a scan folds a change
/// per advertisement). Public only as ``InterfaceProperties/table``'s type: its members are
/// BlueZKit's.
public final class PropertyTable<Record>: Sendable {
    package let declarations: [PropertyDeclaration<Record>]
    private let byName: [String: Int]
    /// Declaration index by ``PackedProperties/knownNames`` index (-1: not declared).
    private let byKnownIndex: [Int]
    /// Declarations whose names the packed record does not store as a known index.
    private let unknownToPacking: [Int]

    init(_ declarations: [PropertyDeclaration<Record>]) {
        self.declarations = declarations
        byName = Dictionary(declarations.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { first, _ in first })
        var byKnownIndex = [Int](repeating: -1, count: PackedProperties.knownNames.count)
        var unknown = [Int]()
        for (i, declaration) in declarations.enumerated() {
            if let known = PackedProperties.index(of: declaration.name) { byKnownIndex[Int(known)] = i } else { unknown.append(i) }
        }
        self.byKnownIndex = byKnownIndex
        unknownToPacking = unknown
    }

    /// The declared property names, in order.
    var names: [String] { declarations.map(\.name) }

    /// The table of the declarations that go to `use`.
    func only(_ use: PropertyUses) -> PropertyTable {
        PropertyTable(declarations.filter { $0.uses.contains(use) })
    }

    /// The declared fields of `record` copied into `blank` (a record of the properties of
    /// this table only, when `blank` has none).
    func projection(of record: Record, into blank: Record) -> Record {
        var out = blank
        for declaration in declarations { declaration.copy(&out, record) }
        return out
    }

    /// Folds properties as the object cache keeps them (an object's, or the changed ones of a
    /// PropertiesChanged) into `record`, then clears the `invalidated` ones.
    func fold(_ changed: PackedProperties, invalidated: [String] = [], into record: inout Record) {
        changed.forEachKnownEntry { index, reader in
            let i = Int(index) < byKnownIndex.count ? byKnownIndex[Int(index)] : -1
            if i >= 0 { declarations[i].assignPacked(&record, &reader) }
        }
        // Names the packed record keeps by name, and values it keeps decoded (a file
        // descriptor, under any name), are not among its known entries.
        let byName = changed.hasUnpackedValues ? Array(declarations.indices) : unknownToPacking
        for i in byName {
            if let value = changed.value(of: declarations[i].name) { declarations[i].assign(&record, value) }
        }
        clear(invalidated, in: &record)
    }

    /// Folds decoded properties (property name → value) into `record`, then clears the
    /// `invalidated` ones.
    func fold(_ changed: [String: DBusValue], invalidated: [String] = [], into record: inout Record) {
        for (name, value) in changed {
            if let i = byName[name] { declarations[i].assign(&record, value) }
        }
        clear(invalidated, in: &record)
    }

    private func clear(_ invalidated: [String], in record: inout Record) {
        for name in invalidated {
            if let i = byName[name] { declarations[i].assign(&record, nil) }
        }
    }
}
