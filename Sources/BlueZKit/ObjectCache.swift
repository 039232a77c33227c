import DBusKit

/// The properties of every org.bluez object this session knows, kept current by folding
/// InterfacesAdded, InterfacesRemoved and PropertiesChanged into it (a pure reducer, as bleak's
/// manager does). Only the interfaces blectl uses are kept.
///
/// Properties are kept packed, one compact record per object and interface (``Properties``),
/// packed straight from the signal's wire form where DBusKit keeps it (a busy scan caches
/// tens of thousands of devices), and decoded when read.
///
/// A characteristic's or descriptor's `Value` is not kept: a value is read from the reply or
/// the signal that carried it (``SessionEvent/changed(_:interface:changed:invalidated:)``), never
/// from a cache that a later notification may already have overwritten, and a notification
/// stream then costs no fold at all.
public struct ObjectCache: Sendable {
    /// path -> interface -> properties, Device1 excepted.
    private var others: [ObjectPath: [String: Properties]] = [:]
    /// path -> Device1 properties (one record each, no dictionary around it).
    private var devices: [ObjectPath: Properties] = [:]
    /// path -> the reason of the device's last Device1.Disconnected signal, kept until its
    /// link is up again (Connected true) or the device object goes.
    private var disconnections: [ObjectPath: DisconnectReason] = [:]

    package init() {}

    /// path -> interface -> properties: every object (a copy: reading one object through
    /// ``subscript(_:_:)`` or ``property(_:of:on:)`` is cheaper).
    public var objects: [ObjectPath: [String: Properties]] {
        var out = others
        for (path, properties) in devices { out[path, default: [:]][BlueZ.deviceInterface] = properties }
        return out
    }

    public subscript(path: ObjectPath, interface: String) -> Properties? {
        if interface == BlueZ.deviceInterface { return devices[path] }
        return others[path]?[interface]
    }

    public func property(_ name: String, of path: ObjectPath, on interface: String) -> DBusValue? {
        self[path, interface]?[name]
    }

    /// Whether `path` has `interface`.
    func has(_ path: ObjectPath, _ interface: String) -> Bool {
        interface == BlueZ.deviceInterface ? devices[path] != nil : others[path]?[interface] != nil
    }

    /// The device at `path` as an ``Advertisement`` (read from its packed record with no
    /// dictionary made); nil when there is no such device or its address is missing.
    func advertisement(at path: ObjectPath) -> Advertisement? {
        devices[path].flatMap { Advertisement(path: path, advertised: DeviceProperties(advertisementIn: $0.packed)) }
    }

    /// Why bluetoothd says the link of the device at `path` last went down
    /// (Device1.Disconnected, 5.83 and later), while it is not up again; nil when it sent no
    /// such signal.
    public func disconnectReason(of path: ObjectPath) -> DisconnectReason? {
        disconnections.isEmpty ? nil : disconnections[path]
    }

    /// Paths having `interface`, sorted.
    public func paths(with interface: String, under root: ObjectPath? = nil) -> [ObjectPath] {
        let candidates: [ObjectPath] = interface == BlueZ.deviceInterface
            ? Array(devices.keys)
            : others.compactMap { path, interfaces in interfaces[interface] != nil ? path : nil }
        return candidates.filter { path in root.map { path.isDescendant(ofOrEqualTo: $0) } ?? true }.sorted()
    }

    /// Replaces the contents with a GetManagedObjects reply's objects (`a{oa{sa{sv}}}`, the
    /// reply's first value). Malformed entries are skipped.
    package mutating func load(managedObjects value: DBusValue) {
        others.removeAll(keepingCapacity: true)
        devices.removeAll(keepingCapacity: true)
        for entry in value.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPath else { continue }
            add(path, Self.interfaces(entry.value))
        }
    }

    /// Replaces the contents with the objects of `reply`, a GetManagedObjects reply: read from
    /// its wire form where DBusKit kept it, else from its decoded body. Malformed entries are
    /// skipped.
    mutating func load(managedObjectsReply reply: Message) {
        if let wire = reply.wire, let objects = Self.managedObjects(wire: wire) {
            others.removeAll(keepingCapacity: true)
            devices.removeAll(keepingCapacity: true)
            for (path, interfaces) in objects { add(path, interfaces) }
            return
        }
        load(managedObjects: reply.body.first ?? .array(elementSignature: "y", []))
    }

    /// The interfaces of an `a{sa{sv}}` (InterfacesAdded's, or an object's in GetManagedObjects)
    /// that the cache keeps, with their properties.
    static func interfaces(_ value: DBusValue) -> [String: Properties] {
        var interfaces = [String: Properties]()
        for entry in value.dictionaryEntries ?? [] {
            guard let name = entry.key.string, BlueZ.cachedInterfaces.contains(name) else { continue }
            interfaces[name, default: Properties()].fold(Properties(entry.value.stringKeyedDictionary ?? [:]), invalidated: [])
        }
        return interfaces
    }

    /// Adds (or merges into) the object's interfaces.
    private mutating func add(_ path: ObjectPath, _ interfaces: [String: Properties]) {
        for (name, properties) in interfaces {
            if name == BlueZ.deviceInterface {
                devices[path, default: Properties()].fold(properties, invalidated: [])
            } else {
                others[path, default: [:]][name, default: Properties()]
                    .fold(properties, invalidated: Self.keepsValue(name) ? [] : [Self.value])
            }
        }
    }

    /// The property the cache does not keep on ``BlueZ/gattCharacteristicInterface`` and
    /// ``BlueZ/gattDescriptorInterface`` (bluez/doc/org.bluez.GattCharacteristic.rst: the
    /// cached value BlueZ updates on every read and notification).
    private static let value = "Value"

    /// Whether `interface`'s `Value` is kept (it is not on characteristics and descriptors).
    private static func keepsValue(_ interface: String) -> Bool {
        interface != BlueZ.gattCharacteristicInterface && interface != BlueZ.gattDescriptorInterface
    }

    /// Folds one signal from org.bluez into the cache; returns the event with the values the
    /// signal carried, or nil when the signal is not one the cache tracks or is malformed.
    /// The caller checks that the signal came from bluetoothd.
    package mutating func apply(_ signal: Message) -> SessionEvent? {
        // PropertiesChanged first: nearly every signal is one, and its names are the very
        // strings tried here (``StandardNames``), equal on identity.
        switch (signal.interface, signal.member) {
        case (BlueZ.properties, StandardNames.propertiesChanged):
            // nil when the object does not have the interface here (the cache keeps only
            // BlueZ.cachedInterfaces).
            guard let path = signal.path, let (interface, changed, invalidated) = propertiesChanged(signal, at: path) else { return nil }
            // Folded in place, each key looked up once.
            if interface == BlueZ.deviceInterface {
                devices[path]?.fold(changed, invalidated: invalidated)
                if !disconnections.isEmpty, changed["Connected"]?.bool == true { disconnections[path] = nil }
            } else if Self.keepsValue(interface) {
                others[path]?[interface]?.fold(changed, invalidated: invalidated)
            } else if !(invalidated.isEmpty && changed.packed.hasOnly(Self.value)) {
                // A notification (Value alone) changes nothing kept: no fold.
                others[path]?[interface]?.fold(changed, invalidated: invalidated + [Self.value])
            }
            return .changed(path, interface: interface, changed: changed, invalidated: invalidated)
        case (BlueZ.objectManager, StandardNames.interfacesAdded):
            guard let (path, added) = Self.interfacesAdded(signal), !added.isEmpty else { return nil }
            add(path, added)
            return .added(path, interfaces: added)
        case (BlueZ.objectManager, StandardNames.interfacesRemoved):
            let body = signal.body
            guard body.count >= 2, let path = body[0].objectPath, let names = body[1].stringArray else { return nil }
            let removed = names.filter { has(path, $0) }
            for name in removed {
                if name == BlueZ.deviceInterface {
                    devices[path] = nil
                    disconnections[path] = nil
                } else {
                    others[path]?[name] = nil
                }
            }
            if others[path]?.isEmpty == true { others[path] = nil }
            return removed.isEmpty ? nil : .removed(path, interfaces: removed)
        case (BlueZ.deviceInterface, DisconnectReason.member):
            // Kept for the link-loss errors that follow (Connected=false comes next): no event.
            let body = signal.body
            guard let path = signal.path, devices[path] != nil, body.count >= 2, let name = body[0].string,
                  let message = body[1].string else { return nil }
            disconnections[path] = DisconnectReason(name: name, message: message)
            return nil
        default:
            return nil
        }
    }

    /// InterfacesAdded's object and the interfaces the cache keeps, with their properties;
    /// nil when malformed. Read from the wire form where DBusKit kept it.
    private static func interfacesAdded(_ signal: Message) -> (ObjectPath, [String: Properties])? {
        if let wire = signal.wire, let read = interfacesAdded(wire: wire) { return read }
        let body = signal.body
        guard body.count >= 2, let path = body[0].objectPath else { return nil }
        return (path, interfaces(body[1]))
    }

    /// PropertiesChanged's interface, changed properties and invalidated names; nil when
    /// malformed, or when the cache does not keep that interface of `path` (its properties
    /// are then not read from the wire at all).
    private func propertiesChanged(_ signal: Message, at path: ObjectPath) -> (String, Properties, [String])? {
        if let wire = signal.wire, let read = Self.propertiesChanged(wire: wire, wanted: { has(path, $0) }) {
            guard case .read(let changed) = read else { return nil }
            return changed
        }
        let body = signal.body
        guard body.count >= 2, let interface = body[0].string, has(path, interface),
              let changed = body[1].stringKeyedDictionary else { return nil }
        let invalidated = body.count >= 3 ? (body[2].stringArray ?? []) : []
        return (interface, Properties(changed), invalidated)
    }

    /// Forgets everything (bluetoothd left the bus).
    public mutating func clear() {
        others.removeAll()
        devices.removeAll()
        disconnections.removeAll()
    }
}
