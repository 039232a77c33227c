import DBusKit

/// The properties of every org.bluez object this session knows, kept current by folding
/// InterfacesAdded, InterfacesRemoved and PropertiesChanged into it (a pure reducer, as bleak's
/// manager does). Only the interfaces blectl uses are kept.
///
/// Device1 properties (tens of thousands of devices during a busy scan) are kept packed,
/// one compact record per device (``PackedProperties``), and decoded when read; the other
/// interfaces as dictionaries. Both read the same.
public struct ObjectCache: Sendable {
    public typealias Properties = [String: DBusValue]
    /// path -> interface -> property -> value, Device1 excepted.
    private var others: [ObjectPath: [String: Properties]] = [:]
    /// path -> Device1 properties, packed.
    private var devices: [ObjectPath: PackedProperties] = [:]

    public init() {}

    /// path -> interface -> property -> value: every object, decoded (a copy: reading one
    /// object through ``subscript(_:_:)`` or ``property(_:of:on:)`` is cheaper).
    public var objects: [ObjectPath: [String: Properties]] {
        var out = others
        for (path, packed) in devices { out[path, default: [:]][BlueZ.deviceInterface] = packed.dictionary }
        return out
    }

    public subscript(path: ObjectPath, interface: String) -> Properties? {
        if interface == BlueZ.deviceInterface { return devices[path]?.dictionary }
        return others[path]?[interface]
    }

    public func property(_ name: String, of path: ObjectPath, on interface: String) -> DBusValue? {
        if interface == BlueZ.deviceInterface { return devices[path]?.value(of: name) }
        return others[path]?[interface]?[name]
    }

    /// Whether `path` has `interface`.
    func has(_ path: ObjectPath, _ interface: String) -> Bool {
        interface == BlueZ.deviceInterface ? devices[path] != nil : others[path]?[interface] != nil
    }

    /// The device at `path` as an ``Advertisement`` (read from its packed record without
    /// decoding it); nil when there is no such device or its address is missing.
    func advertisement(at path: ObjectPath) -> Advertisement? {
        devices[path].flatMap { Advertisement(path: path, packed: $0) }
    }

    /// Paths having `interface`, sorted.
    public func paths(with interface: String, under root: ObjectPath? = nil) -> [ObjectPath] {
        let candidates: [ObjectPath] = interface == BlueZ.deviceInterface
            ? Array(devices.keys)
            : others.compactMap { path, interfaces in interfaces[interface] != nil ? path : nil }
        return candidates.filter { path in root.map { path.isDescendant(ofOrEqualTo: $0) } ?? true }.sorted()
    }

    /// Replaces the contents with a GetManagedObjects reply (`a{oa{sa{sv}}}`). Malformed
    /// entries are skipped.
    public mutating func load(managedObjects value: DBusValue) {
        others.removeAll(keepingCapacity: true)
        devices.removeAll(keepingCapacity: true)
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
            if name == BlueZ.deviceInterface {
                devices[path, default: PackedProperties()].merge(properties, invalidated: [])
            } else {
                others[path, default: [:]][name, default: [:]].merge(properties) { _, new in new }
            }
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
            let removed = names.filter { has(path, $0) }
            for name in removed {
                if name == BlueZ.deviceInterface { devices[path] = nil } else { others[path]?[name] = nil }
            }
            if others[path]?.isEmpty == true { others[path] = nil }
            return removed.isEmpty ? nil : .removed(path, interfaces: removed)
        case (BlueZ.properties, "PropertiesChanged"):
            guard signal.body.count >= 2, let path = signal.path, let interface = signal.body[0].string,
                  let changed = signal.body[1].stringKeyedDictionary else { return nil }
            let invalidated = signal.body.count >= 3 ? (signal.body[2].stringArray ?? []) : []
            // Folded in place, each key looked up once; nil when the object does not have the
            // interface here (the cache keeps only BlueZ.cachedInterfaces).
            let folded: Void? = interface == BlueZ.deviceInterface
                ? devices[path]?.merge(changed, invalidated: invalidated)
                : others[path]?[interface]?.fold(changed, invalidated: invalidated)
            guard folded != nil else { return nil }
            return .changed(path, interface: interface, changed: changed, invalidated: invalidated)
        default:
            return nil
        }
    }

    /// Forgets everything (bluetoothd left the bus).
    public mutating func clear() {
        others.removeAll()
        devices.removeAll()
    }
}

extension ObjectCache.Properties {
    /// PropertiesChanged's fold: `changed` replaces or adds, then `invalidated` removes.
    fileprivate mutating func fold(_ changed: ObjectCache.Properties, invalidated: [String]) {
        merge(changed) { _, new in new }
        for name in invalidated { self[name] = nil }
    }
}
