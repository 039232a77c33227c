import DBusKit

/// The properties of every org.bluez object this session knows, kept current by folding
/// InterfacesAdded, InterfacesRemoved and PropertiesChanged into it (a pure reducer, as bleak's
/// manager does). Only the interfaces blectl uses are kept.
public struct ObjectCache: Sendable {
    public typealias Properties = [String: DBusValue]
    /// path -> interface -> property -> value
    public private(set) var objects: [ObjectPath: [String: Properties]] = [:]

    public init() {}

    public subscript(path: ObjectPath, interface: String) -> Properties? {
        objects[path]?[interface]
    }

    public func property(_ name: String, of path: ObjectPath, on interface: String) -> DBusValue? {
        objects[path]?[interface]?[name]
    }

    /// Paths having `interface`, sorted.
    public func paths(with interface: String, under root: ObjectPath? = nil) -> [ObjectPath] {
        objects.compactMap { path, interfaces in
            guard interfaces[interface] != nil else { return nil }
            if let root, !path.isDescendant(ofOrEqualTo: root) { return nil }
            return path
        }.sorted()
    }

    /// Replaces the contents with a GetManagedObjects reply (`a{oa{sa{sv}}}`). Malformed
    /// entries are skipped.
    public mutating func load(managedObjects value: DBusValue) {
        objects.removeAll(keepingCapacity: true)
        for entry in value.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPath else { continue }
            add(path, interfaces: entry.value)
        }
    }

    @discardableResult
    private mutating func add(_ path: ObjectPath, interfaces value: DBusValue) -> [String: Properties] {
        var added = [String: Properties]()
        for entry in value.dictionaryEntries ?? [] {
            guard let name = entry.key.string, BlueZ.cachedInterfaces.contains(name) else { continue }
            let properties = entry.value.stringKeyedDictionary ?? [:]
            objects[path, default: [:]][name, default: [:]].merge(properties) { _, new in new }
            added[name] = properties
        }
        return added
    }

    /// Folds one signal from org.bluez into the cache; returns the event with the values the
    /// signal carried, or nil when the signal is not one the cache tracks or is malformed.
    /// The caller checks that the signal came from bluetoothd.
    public mutating func apply(_ signal: Message) -> SessionEvent? {
        switch (signal.interface, signal.member) {
        case (BlueZ.objectManager, "InterfacesAdded"):
            guard signal.body.count >= 2, let path = signal.body[0].objectPath else { return nil }
            let added = add(path, interfaces: signal.body[1])
            return added.isEmpty ? nil : .added(path, interfaces: added)
        case (BlueZ.objectManager, "InterfacesRemoved"):
            guard signal.body.count >= 2, let path = signal.body[0].objectPath,
                  let names = signal.body[1].stringArray else { return nil }
            let removed = names.filter { objects[path]?[$0] != nil }
            for name in removed { objects[path]?[name] = nil }
            if objects[path]?.isEmpty == true { objects[path] = nil }
            return removed.isEmpty ? nil : .removed(path, interfaces: removed)
        case (BlueZ.properties, "PropertiesChanged"):
            guard signal.body.count >= 2, let path = signal.path, let interface = signal.body[0].string,
                  BlueZ.cachedInterfaces.contains(interface),
                  objects[path]?[interface] != nil,
                  let changed = signal.body[1].stringKeyedDictionary else { return nil }
            let invalidated = signal.body.count >= 3 ? (signal.body[2].stringArray ?? []) : []
            objects[path]![interface]!.merge(changed) { _, new in new }
            for name in invalidated { objects[path]![interface]![name] = nil }
            return .changed(path, interface: interface, changed: changed, invalidated: invalidated)
        default:
            return nil
        }
    }

    /// Forgets everything (bluetoothd left the bus).
    public mutating func clear() { objects.removeAll() }
}
