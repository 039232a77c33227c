import DBusKit

/// A Swift type a BlueZ property's value decodes to, with ``DBusValue``'s typed accessors'
/// rules: variants are looked through, and a value of another D-Bus type decodes to nil.
protocol PropertyValue: Sendable {
    /// The value of a decoded property; nil for another D-Bus type.
    init?(propertyValue: DBusValue)
    /// The value at `reader` in a packed record (the object cache's form); nil, with the
    /// value skipped, for another D-Bus type.
    init?(packedValue reader: inout PackedReader)
    /// The value as ``ReflectedPropertyValue`` shows it.
    var reflected: ReflectedPropertyValue { get }
    /// What the property's absence amounts to when it is shown: nil, or an empty list or
    /// dictionary.
    static var none: Self? { get }
}

extension PropertyValue {
    static var none: Self? { nil }
}

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

/// A declared property's value as one of the shapes BlueZ's property values take, for code
/// that shows every property of a record alike (blectl's records): numbers of every D-Bus
/// integer type as ``integer(_:)``, addresses and object paths as ``string(_:)``.
package enum ReflectedPropertyValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case integer(Int)
    case uuids([BluetoothUUID])
    /// Company identifier → data (Device1.ManufacturerData).
    case manufacturerData([UInt16: [UInt8]])
    /// Service UUID → data (Device1.ServiceData).
    case serviceData([BluetoothUUID: [UInt8]])
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
/// per advertisement).
package final class PropertyTable<Record>: Sendable {
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

// MARK: - The value types BlueZ's properties decode to

extension String: PropertyValue {
    var reflected: ReflectedPropertyValue { .string(self) }
    init?(propertyValue: DBusValue) {
        guard let value = propertyValue.string else { return nil }
        self = value
    }
    init?(packedValue reader: inout PackedReader) {
        guard let value = reader.stringValue() else { return nil }
        self = value
    }
}

extension Bool: PropertyValue {
    var reflected: ReflectedPropertyValue { .bool(self) }
    init?(propertyValue: DBusValue) {
        guard let value = propertyValue.bool else { return nil }
        self = value
    }
    init?(packedValue reader: inout PackedReader) {
        guard let value = reader.boolValue() else { return nil }
        self = value
    }
}

/// Any D-Bus integer type whose value fits.
extension Int: PropertyValue {
    var reflected: ReflectedPropertyValue { .integer(self) }
    init?(propertyValue: DBusValue) {
        guard let value = propertyValue.integer else { return nil }
        self = value
    }
    init?(packedValue reader: inout PackedReader) {
        guard let value = reader.integerValue() else { return nil }
        self = value
    }
}

/// Any D-Bus integer type whose value fits (Appearance `q`).
extension UInt16: PropertyValue {
    var reflected: ReflectedPropertyValue { .integer(Int(self)) }
    init?(propertyValue: DBusValue) {
        guard let value = propertyValue.integer.flatMap({ UInt16(exactly: $0) }) else { return nil }
        self = value
    }
    init?(packedValue reader: inout PackedReader) {
        guard let value = reader.integerValue().flatMap({ UInt16(exactly: $0) }) else { return nil }
        self = value
    }
}

/// Any D-Bus integer type whose value fits (Class `u`).
extension UInt32: PropertyValue {
    var reflected: ReflectedPropertyValue { .integer(Int(self)) }
    init?(propertyValue: DBusValue) {
        guard let value = propertyValue.integer.flatMap({ UInt32(exactly: $0) }) else { return nil }
        self = value
    }
    init?(packedValue reader: inout PackedReader) {
        guard let value = reader.integerValue().flatMap({ UInt32(exactly: $0) }) else { return nil }
        self = value
    }
}

/// `s` holding a Bluetooth address (Device1.Address); nil when malformed.
extension BluetoothAddress: PropertyValue {
    var reflected: ReflectedPropertyValue { .string(description) }
    init?(propertyValue: DBusValue) {
        guard let address = propertyValue.string.flatMap({ BluetoothAddress($0) }) else { return nil }
        self = address
    }
    init?(packedValue reader: inout PackedReader) {
        guard let address = reader.stringValue().flatMap({ BluetoothAddress($0) }) else { return nil }
        self = address
    }
}

extension ObjectPath: PropertyValue {
    var reflected: ReflectedPropertyValue { .string(rawValue) }
    init?(propertyValue: DBusValue) {
        guard let value = propertyValue.objectPath else { return nil }
        self = value
    }
    init?(packedValue reader: inout PackedReader) {
        guard let value = reader.objectPathValue() else { return nil }
        self = value
    }
}

/// `as` of UUIDs (Device1.UUIDs); malformed entries skipped.
extension [BluetoothUUID]: PropertyValue {
    var reflected: ReflectedPropertyValue { .uuids(self) }
    static var none: [BluetoothUUID]? { [] }
    init?(propertyValue: DBusValue) {
        guard let strings = propertyValue.stringArray else { return nil }
        self = strings.compactMap { BluetoothUUID($0) }
    }
    init?(packedValue reader: inout PackedReader) {
        guard let strings = reader.stringArrayValue() else { return nil }
        self = strings.compactMap { BluetoothUUID($0) }
    }
}

/// A key of a BlueZ data dictionary: a company identifier (`q`, ManufacturerData) or a
/// service UUID (`s`, ServiceData).
protocol PropertyDataKey: Hashable, Sendable {
    init?(propertyKey: DBusValue)
    init?(packedKey reader: inout PackedReader)
    static func reflect(_ data: [Self: [UInt8]]) -> ReflectedPropertyValue
}

extension UInt16: PropertyDataKey {
    init?(propertyKey: DBusValue) { self.init(propertyValue: propertyKey) }
    init?(packedKey reader: inout PackedReader) { self.init(packedValue: &reader) }
    static func reflect(_ data: [UInt16: [UInt8]]) -> ReflectedPropertyValue { .manufacturerData(data) }
}

extension BluetoothUUID: PropertyDataKey {
    static func reflect(_ data: [BluetoothUUID: [UInt8]]) -> ReflectedPropertyValue { .serviceData(data) }
    init?(propertyKey: DBusValue) {
        guard let uuid = propertyKey.string.flatMap({ BluetoothUUID($0) }) else { return nil }
        self = uuid
    }
    init?(packedKey reader: inout PackedReader) {
        guard let uuid = reader.stringValue().flatMap({ BluetoothUUID($0) }) else { return nil }
        self = uuid
    }
}

/// `a{qv}` or `a{sv}` of bytes: company identifier → data (Device1.ManufacturerData), service
/// UUID → data (Device1.ServiceData); malformed entries skipped.
extension Dictionary: PropertyValue where Key: PropertyDataKey, Value == [UInt8] {
    var reflected: ReflectedPropertyValue { Key.reflect(self) }
    static var none: [Key: [UInt8]]? { [:] }
    init?(propertyValue: DBusValue) {
        guard let entries = propertyValue.dictionaryEntries else { return nil }
        var out = [Key: [UInt8]]()
        for entry in entries {
            guard let key = Key(propertyKey: entry.key), let data = entry.value.bytes else { continue }
            out[key] = data
        }
        self = out
    }
    init?(packedValue reader: inout PackedReader) {
        guard reader.unwrappedCode() == UInt8(ascii: "e") else { reader.skipValue(); return nil }
        var out = [Key: [UInt8]]()
        reader.forEachDictionaryEntry { key, value in
            guard let key = Key(packedKey: &key), let data = value.bytesValue() else { return }
            out[key] = data
        }
        self = out
    }
}
