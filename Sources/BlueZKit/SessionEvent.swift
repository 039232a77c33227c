import DBusKit

/// One thing that happened to BlueZ's objects, as a ``Session`` saw it: a signal from
/// bluetoothd (with the values it carried), bluetoothd coming or going, or the bus lost.
///
/// Events are delivered in bus order, one at a time, each with the object cache as it was
/// right after that event (see ``Session/wait(for:timeout:_:)`` and ``Session/events()``).
/// Only signals from the current unique-name owner of `org.bluez` make events; signals any
/// other bus client sends (even straight to us) are dropped.
public enum SessionEvent: Sendable, Equatable {
    /// InterfacesAdded (org.freedesktop.DBus.ObjectManager): the object, and for each interface
    /// the cache keeps (``BlueZ``'s Adapter1, Device1, GattService1, GattCharacteristic1,
    /// GattDescriptor1, Battery1) the properties as sent; typed by ``changes(of:at:)``.
    case added(ObjectPath, interfaces: [String: ObjectCache.Properties])
    /// InterfacesRemoved: the object and the interfaces it lost (those the cache had).
    case removed(ObjectPath, interfaces: [String])
    /// PropertiesChanged (org.freedesktop.DBus.Properties): the new values as sent, and the
    /// names invalidated (their values dropped from the cache); typed by ``changes(of:at:)``.
    case changed(ObjectPath, interface: String, changed: ObjectCache.Properties, invalidated: [String])
    /// GetManagedObjects answered: the cache was replaced by bluetoothd's objects (after
    /// bluetoothd started again under a new owner).
    case loaded
    /// `org.bluez` got an owner (bluetoothd started, or restarted): its unique name. The cache
    /// is reloaded; ``loaded`` follows.
    case bluezAppeared(owner: String)
    /// bluetoothd left the bus (NameOwnerChanged with no new owner): the cache is emptied.
    case bluezVanished
    /// The connection to the bus was lost (or closed): the cache is emptied; nothing follows.
    case busLost

    /// Whether this event ends what depends on bluetoothd (it left, or the bus is gone).
    public var endsBlueZ: Bool {
        switch self {
        case .bluezVanished, .busLost: true
        default: false
        }
    }

    /// The error for what depends on bluetoothd when this event ends it (see ``endsBlueZ``).
    public var unavailability: BLEError? {
        switch self {
        case .bluezVanished: .unavailable(.bluezLeft)
        case .busLost: .unavailable(.busLost)
        default: nil
        }
    }

    /// The value of property `name` that this event set on `interface` of `path`, if it did.
    public func value(of name: String, on interface: String, at path: ObjectPath) -> DBusValue? {
        switch self {
        case .changed(path, interface, let changed, _): changed[name]
        case .added(path, let interfaces): interfaces[interface]?[name]
        default: nil
        }
    }
}
