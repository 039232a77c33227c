import DBusKit

/// A Bluetooth adapter, org.bluez.Adapter1 (bluez/doc/org.bluez.Adapter.rst): a cheap handle
/// of (session, object path).
public struct Adapter: Sendable {
    public let session: Session
    /// `/org/bluez/hci0`
    public let path: ObjectPath
    /// `hci0`
    public var name: String { String(path.lastComponent) }

    /// A handle for the adapter at `path` (`/org/bluez/hci0`); nothing is checked.
    public init(session: Session, path: ObjectPath) {
        self.session = session
        self.path = path
    }

    /// Every adapter BlueZ has, powered or not, sorted by object path (org.bluez.Adapter1
    /// objects in the session's cache).
    public static func all(in session: Session) -> [Adapter] {
        session.withCache { $0.paths(with: BlueZ.adapterInterface) }.map { Adapter(session: session, path: $0) }
    }

    /// The adapter named `name` (`hci0`).
    /// - Throws: ``BLEError/unavailable(_:)`` `.noAdapter(name)` when BlueZ has none so named.
    public static func named(_ name: String, in session: Session) throws -> Adapter {
        guard let adapter = all(in: session).first(where: { $0.name == name }) else { throw BLEError.unavailable(.noAdapter(name)) }
        return adapter
    }

    /// Adapter1.Powered as last signalled (false when unknown).
    public var isPowered: Bool {
        let path = path
        return session.withCache { $0.property("Powered", of: path, on: BlueZ.adapterInterface)?.bool } ?? false
    }

    /// blectl's choice of adapter: the one named (which must be powered), or the first
    /// powered one by path.
    /// - Parameter name: `hci0`-style name; nil picks the first powered adapter by path.
    /// - Throws: ``BLEError/unavailable(_:)`` with `.noAdapter` (none, or not the one named) or
    ///   `.poweredOff`.
    package static func ready(in session: Session, named name: String?) throws -> Adapter {
        try session.withCache { cache in
            let all = cache.paths(with: BlueZ.adapterInterface)
            let powered = { (path: ObjectPath) in cache.property("Powered", of: path, on: BlueZ.adapterInterface)?.bool == true }
            if let name {
                guard let path = all.first(where: { $0.lastComponent == name[...] }) else { throw BLEError.unavailable(.noAdapter(name)) }
                guard powered(path) else { throw BLEError.unavailable(.poweredOff(name)) }
                return Adapter(session: session, path: path)
            }
            guard let first = all.first else { throw BLEError.unavailable(.noAdapter(nil)) }
            guard let path = all.first(where: powered) else { throw BLEError.unavailable(.poweredOff(String(first.lastComponent))) }
            return Adapter(session: session, path: path)
        }
    }

    /// blectl's choice of adapter when it need not be powered (reading what BlueZ knows): the
    /// one named, powered or not; else the first powered one by path; else the first one.
    /// - Parameter name: `hci0`-style name; nil for the default choice.
    /// - Throws: ``BLEError/unavailable(_:)`` `.noAdapter` (none, or not the one named).
    package static func present(in session: Session, named name: String?) throws -> Adapter {
        try session.withCache { cache in
            let all = cache.paths(with: BlueZ.adapterInterface)
            if let name {
                guard let path = all.first(where: { $0.lastComponent == name[...] }) else { throw BLEError.unavailable(.noAdapter(name)) }
                return Adapter(session: session, path: path)
            }
            let powered = { (path: ObjectPath) in cache.property("Powered", of: path, on: BlueZ.adapterInterface)?.bool == true }
            guard let path = all.first(where: powered) ?? all.first else { throw BLEError.unavailable(.noAdapter(nil)) }
            return Adapter(session: session, path: path)
        }
    }

    /// The object path BlueZ gives `address` under this adapter.
    public func devicePath(for address: BluetoothAddress) -> ObjectPath {
        path.appending(address.devicePathComponent)
    }

    /// The device if BlueZ knows it (it has a Device1 object), else nil.
    public func knownDevice(_ address: BluetoothAddress) -> Device? {
        let path = devicePath(for: address)
        let known = session.withCache { $0[path, BlueZ.deviceInterface] != nil }
        return known ? Device(adapter: self, address: address) : nil
    }

    /// Devices BlueZ has in its object tree under this adapter (cached ones included).
    public var knownDevices: [Advertisement] {
        session.withCache { cache in
            cache.paths(with: BlueZ.deviceInterface, under: path).compactMap { devicePath in
                cache[devicePath, BlueZ.deviceInterface].flatMap { Advertisement(path: devicePath, properties: $0) }
            }
        }
    }
}
