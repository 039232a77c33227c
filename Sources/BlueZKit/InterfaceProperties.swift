import DBusKit

/// The typed properties of one BlueZ interface: a record whose fields are the values of the
/// interface's properties, each nil when BlueZ has none (absent, invalidated, or of an
/// unexpected D-Bus type), declared once in a table of D-Bus names and fields:
/// ``DeviceProperties``, ``AdapterProperties``, ``BatteryProperties``,
/// ``GATTServiceProperties``, ``GATTCharacteristicProperties``, ``GATTDescriptorProperties``.
///
/// Read one from the object cache (`AdapterProperties(cache[path, BlueZ.adapterInterface]!)`),
/// keep it current with ``fold(_:invalidated:)``, or take a signal's values typed with
/// ``SessionEvent/changes(of:at:)``.
public protocol InterfaceProperties: Sendable, Equatable {
    /// The D-Bus interface (``BlueZ/adapterInterface``, ...).
    static var interface: String { get }
    /// The table declaring the record's properties: each D-Bus name and the field it goes to.
    static var table: PropertyTable<Self> { get }
    /// The D-Bus names of the properties the record has (`"Powered"`), in the table's order.
    static var propertyNames: [String] { get }
    /// The record with no property known.
    init()
    /// The record of an object's properties on ``interface``, as the object cache keeps them;
    /// properties the record does not have are ignored.
    init(_ properties: ObjectCache.Properties)
    /// Folds a PropertiesChanged of ``interface`` into the record: changed properties
    /// replaced, invalidated ones cleared.
    mutating func fold(_ changed: ObjectCache.Properties, invalidated: [String])
}

/// Each record is read and folded through its table.
extension InterfaceProperties {
    public static var propertyNames: [String] { table.names }

    public init(_ properties: ObjectCache.Properties) {
        self.init()
        Self.table.fold(properties.packed, into: &self)
    }

    public mutating func fold(_ changed: ObjectCache.Properties, invalidated: [String]) {
        Self.table.fold(changed.packed, invalidated: invalidated, into: &self)
    }
}

/// What one ``SessionEvent`` did to the properties of one object on one interface, typed
/// (``SessionEvent/changes(of:at:)``): the values a PropertiesChanged or an InterfacesAdded
/// carried, and the names it set and invalidated.
public struct PropertyChanges<Record: InterfaceProperties>: Sendable, Equatable {
    /// The object.
    public let path: ObjectPath
    /// The values the event carried: a field is nil when the event did not set its property
    /// (see ``changed``) or set it to a value of an unexpected D-Bus type.
    public let values: Record
    /// The properties of the record that the event set, by D-Bus name (`"RSSI"`); every one
    /// of the record's that an object just added has.
    public let changed: Set<String>
    /// The properties of the record that a PropertiesChanged invalidated (BlueZ no longer has
    /// their values), by D-Bus name; none for InterfacesAdded.
    public let invalidated: Set<String>

    /// The properties as the event carried them (what ``fold(into:)`` folds).
    private let properties: ObjectCache.Properties

    init(path: ObjectPath, properties: ObjectCache.Properties, invalidated: [String] = []) {
        let names = Set(Record.propertyNames)
        self.path = path
        self.properties = properties
        values = Record(properties)
        changed = names.intersection(properties.keys)
        self.invalidated = names.intersection(invalidated)
    }

    /// Folds the change into `record` (the object's properties as they were before the
    /// event): the properties set replaced, the invalidated ones cleared.
    public func fold(into record: inout Record) {
        record.fold(properties, invalidated: Array(invalidated))
    }
}

extension SessionEvent {
    /// The values this event set on `Record`'s interface, typed: those of a PropertiesChanged
    /// (with the names it invalidated), or those an InterfacesAdded gave the object; nil for
    /// another event, another interface, or an object other than `path` (when given).
    ///
    /// ```swift
    /// for await event in session.events() {
    ///     if let change = event.changes(of: DeviceProperties.self), change.changed.contains("RSSI") {
    ///         print(change.path, change.values.rssi ?? 0)
    ///     }
    /// }
    /// ```
    public func changes<Record: InterfaceProperties>(of _: Record.Type, at path: ObjectPath? = nil) -> PropertyChanges<Record>? {
        switch self {
        case .changed(let object, let interface, let changed, let invalidated) where interface == Record.interface:
            guard path.map({ $0 == object }) ?? true else { return nil }
            return PropertyChanges(path: object, properties: changed, invalidated: invalidated)
        case .added(let object, let interfaces):
            guard path.map({ $0 == object }) ?? true, let added = interfaces[Record.interface] else { return nil }
            return PropertyChanges(path: object, properties: added)
        default:
            return nil
        }
    }
}
