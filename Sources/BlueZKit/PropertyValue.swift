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

/// A declared property's value as one of the shapes BlueZ's property values take, for code
/// that shows every property of a record alike (blectl's records): numbers of every D-Bus
/// integer type as ``integer(_:)``, addresses and object paths as ``string(_:)``, lists of object
/// paths as ``strings(_:)``.
package enum ReflectedPropertyValue: Sendable, Equatable {
    case string(String)
    case bool(Bool)
    case integer(Int)
    case uuid(BluetoothUUID)
    case uuids([BluetoothUUID])
    /// A list of strings or of object paths (Adapter1.Roles, GattCharacteristic1.Flags,
    /// GattService1.Includes).
    case strings([String])
    /// Bytes (GattCharacteristic1.Value).
    case bytes([UInt8])
    /// Company identifier → data (Device1.ManufacturerData).
    case manufacturerData([UInt16: [UInt8]])
    /// Service UUID → data (Device1.ServiceData).
    case serviceData([BluetoothUUID: [UInt8]])
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

/// `s` holding a UUID (GattService1.UUID); nil when malformed.
extension BluetoothUUID: PropertyValue {
    var reflected: ReflectedPropertyValue { .uuid(self) }
    init?(propertyValue: DBusValue) {
        guard let uuid = propertyValue.string.flatMap({ BluetoothUUID($0) }) else { return nil }
        self = uuid
    }
    init?(packedValue reader: inout PackedReader) {
        guard let uuid = reader.stringValue().flatMap({ BluetoothUUID($0) }) else { return nil }
        self = uuid
    }
}

/// An element of a list BlueZ sends: a UUID (`as`, Device1.UUIDs), a string (`as`,
/// Adapter1.Roles), an object path (`ao`, GattService1.Includes) or a byte (`ay`,
/// GattCharacteristic1.Value).
protocol PropertyListElement: Sendable, Equatable {
    static func list(propertyValue: DBusValue) -> [Self]?
    static func list(packedValue reader: inout PackedReader) -> [Self]?
    static func reflect(_ list: [Self]) -> ReflectedPropertyValue
    /// What the property's absence amounts to when it is shown: nil, or an empty list.
    static var noList: [Self]? { get }
}

extension PropertyListElement {
    static var noList: [Self]? { nil }
}

/// A list of one of the element types BlueZ sends (``PropertyListElement``).
extension Array: PropertyValue where Element: PropertyListElement {
    var reflected: ReflectedPropertyValue { Element.reflect(self) }
    static var none: [Element]? { Element.noList }
    init?(propertyValue: DBusValue) {
        guard let list = Element.list(propertyValue: propertyValue) else { return nil }
        self = list
    }
    init?(packedValue reader: inout PackedReader) {
        guard let list = Element.list(packedValue: &reader) else { return nil }
        self = list
    }
}

/// `as` of UUIDs (Device1.UUIDs); malformed entries skipped; absent, an empty list.
extension BluetoothUUID: PropertyListElement {
    static var noList: [BluetoothUUID]? { [] }
    static func reflect(_ list: [BluetoothUUID]) -> ReflectedPropertyValue { .uuids(list) }
    static func list(propertyValue: DBusValue) -> [BluetoothUUID]? {
        propertyValue.stringArray.map { $0.compactMap { BluetoothUUID($0) } }
    }
    static func list(packedValue reader: inout PackedReader) -> [BluetoothUUID]? {
        reader.stringArrayValue().map { $0.compactMap { BluetoothUUID($0) } }
    }
}

/// `as` (Adapter1.Roles, GattCharacteristic1.Flags).
extension String: PropertyListElement {
    static func reflect(_ list: [String]) -> ReflectedPropertyValue { .strings(list) }
    static func list(propertyValue: DBusValue) -> [String]? { propertyValue.stringArray }
    static func list(packedValue reader: inout PackedReader) -> [String]? { reader.stringArrayValue() }
}

/// `ao` (GattService1.Includes): every element an object path, no variant looked through
/// inside (as ``DBusValue/stringArray``).
extension ObjectPath: PropertyListElement {
    static func reflect(_ list: [ObjectPath]) -> ReflectedPropertyValue { .strings(list.map(\.rawValue)) }
    static func list(propertyValue: DBusValue) -> [ObjectPath]? {
        guard let elements = propertyValue.arrayElements else { return nil }
        var paths = [ObjectPath]()
        paths.reserveCapacity(elements.count)
        for element in elements {
            guard case .objectPath(let path) = element else { return nil }
            paths.append(path)
        }
        return paths
    }
    static func list(packedValue reader: inout PackedReader) -> [ObjectPath]? {
        reader.readValue().flatMap { list(propertyValue: $0) }
    }
}

/// `ay` (GattCharacteristic1.Value, GattDescriptor1.Value), as ``DBusValue/bytes``.
extension UInt8: PropertyListElement {
    static func reflect(_ list: [UInt8]) -> ReflectedPropertyValue { .bytes(list) }
    static func list(propertyValue: DBusValue) -> [UInt8]? { propertyValue.bytes }
    static func list(packedValue reader: inout PackedReader) -> [UInt8]? { reader.bytesValue() }
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
    init?(propertyKey: DBusValue) { self.init(propertyValue: propertyKey) }
    init?(packedKey reader: inout PackedReader) { self.init(packedValue: &reader) }
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
