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
    /// - Throws: ``BLEError/unavailable(_:during:dbusError:)`` `.noAdapter(name)` (stage
    ///   ``BLEOperation/Kind/adapter``) when BlueZ has none so named.
    public static func named(_ name: String, in session: Session) throws -> Adapter {
        guard let adapter = all(in: session).first(where: { $0.name == name }) else {
            throw BLEError.unavailable(.noAdapter(name), during: BLEOperation(.adapter))
        }
        return adapter
    }

    /// Adapter1.Powered as last signalled (false when unknown).
    public var isPowered: Bool {
        let path = path
        return session.withCache { $0.property("Powered", of: path, on: BlueZ.adapterInterface)?.bool } ?? false
    }

    /// Adapter1.PowerState values (bluez/doc/org.bluez.Adapter.rst; BlueZ >= 5.64, or 5.66 with
    /// `--experimental`).
    public enum PowerState {
        public static let on = "on"
        public static let off = "off"
        /// Powering on (bluetoothd just started with AutoEnable, or Powered was set true).
        public static let offEnabling = "off-enabling"
        public static let onDisabling = "on-disabling"
        /// Off and blocked by rfkill.
        public static let offBlocked = "off-blocked"
    }

    /// blectl's choice of adapter: the one named (which must be powered), or the first
    /// powered one by path. An adapter still powering on (PowerState `"off-enabling"`) is
    /// waited for, up to `timeout`; one that is off (`"off"`, or `"off-blocked"` by rfkill)
    /// fails at once. One that is off with no PowerState (bluetoothd 5.66 has it only with
    /// `--experimental`, bluez/doc/org.bluez.Adapter.rst), which may be powering on, is waited
    /// for up to ``unknownPowerStateGrace`` (within `timeout`) before it fails as powered off.
    /// - Parameters:
    ///   - name: `hci0`-style name; nil picks the first powered adapter by path (or, while
    ///     none is powered, waits for the first one powering on).
    ///   - timeout: how long to wait for an adapter powering on.
    /// - Throws: ``BLEError/unavailable(_:during:dbusError:)`` (stage
    ///   ``BLEOperation/Kind/adapter``) with `.noAdapter` (none, or not the one named),
    ///   `.poweredOff` or `.blocked` (rfkill); ``BLEError/timedOut(_:)`` (adapter) when it
    ///   is still powering on (`"off-enabling"`) at `timeout`; `CancellationError`.
    package static func ready(in session: Session, named name: String?, timeout: Duration) async throws -> Adapter {
        let operation = BLEOperation(.adapter)
        // Decided from the cache as it is, without a timer (which may fire first with a zero
        // timeout); only an adapter powering on is waited for.
        let limit: Duration
        switch session.withCache({ cache -> Choice in choice(in: cache, named: name) }) {
        case .ready(let path): return Adapter(session: session, path: path)
        case .unavailable(let why): throw BLEError.unavailable(why, during: operation)
        case .poweringOn: limit = timeout
        case .offWithoutPowerState: limit = min(timeout, unknownPowerStateGrace)
        }
        do {
            let path = try await session.wait(for: operation, timeout: limit) { cache, _ -> WaitStep<ObjectPath> in
                switch choice(in: cache, named: name) {
                case .ready(let path): .done(path)
                case .poweringOn, .offWithoutPowerState: .keepWaiting
                case .unavailable(let why): .fail(BLEError.unavailable(why, during: operation))
                }
            }
            return Adapter(session: session, path: path)
        } catch BLEError.timedOut {
            // Still off with no PowerState: taken as off, not as powering on.
            guard case .offWithoutPowerState(let why) = session.withCache({ choice(in: $0, named: name) }) else {
                throw BLEError.timedOut(operation)
            }
            throw BLEError.unavailable(why, during: operation)
        }
    }

    /// How long ``ready(in:named:timeout:)`` waits for an adapter that is off while bluetoothd
    /// shows no PowerState (5.66 without `--experimental`): bluetoothd powers an adapter on
    /// about 1.5 s after it starts (AutoEnable, measured on the real-bluetoothd rig), and an
    /// adapter that is simply off should still fail quickly.
    public static let unknownPowerStateGrace: Duration = .seconds(3)

    /// ``ready(in:named:timeout:)`` without waiting: an adapter still powering on counts as
    /// powered off.
    /// - Throws: ``BLEError/unavailable(_:during:dbusError:)`` (stage ``BLEOperation/Kind/adapter``)
    ///   with `.noAdapter`, `.poweredOff` or `.blocked`.
    package static func ready(in session: Session, named name: String?) throws -> Adapter {
        let choice = session.withCache { cache -> Choice in Self.choice(in: cache, named: name) }
        switch choice {
        case .ready(let path): return Adapter(session: session, path: path)
        case .poweringOn: throw BLEError.unavailable(.poweredOff(name ?? "hci0"), during: BLEOperation(.adapter))
        case .offWithoutPowerState(let why), .unavailable(let why): throw BLEError.unavailable(why, during: BLEOperation(.adapter))
        }
    }

    /// What ``ready(in:named:timeout:)`` makes of the cache at one moment.
    private enum Choice {
        case ready(ObjectPath)
        /// PowerState `"off-enabling"`.
        case poweringOn
        /// Powered false and no PowerState: off, or powering on; `Unavailability` if off.
        case offWithoutPowerState(Unavailability)
        case unavailable(Unavailability)
    }

    private static func choice(in cache: ObjectCache, named name: String?) -> Choice {
        let all = cache.paths(with: BlueZ.adapterInterface)
        let powered = { (path: ObjectPath) in cache.property("Powered", of: path, on: BlueZ.adapterInterface)?.bool == true }
        let poweringOn = { (path: ObjectPath) in
            cache.property("PowerState", of: path, on: BlueZ.adapterInterface)?.string == PowerState.offEnabling
        }
        let candidates: [ObjectPath]
        if let name {
            guard let path = all.first(where: { $0.lastComponent == name[...] }) else { return .unavailable(.noAdapter(name)) }
            candidates = [path]
        } else {
            guard !all.isEmpty else { return .unavailable(.noAdapter(nil)) }
            candidates = all
        }
        if let path = candidates.first(where: powered) { return .ready(path) }
        if candidates.contains(where: poweringOn) { return .poweringOn }
        let first = candidates[0]
        let why = cache.unavailability(ofAdapter: first, named: String(first.lastComponent)) ?? .poweredOff(String(first.lastComponent))
        let noPowerState = { (path: ObjectPath) in cache.property("PowerState", of: path, on: BlueZ.adapterInterface) == nil }
        if case .poweredOff = why, candidates.contains(where: noPowerState) { return .offWithoutPowerState(why) }
        return .unavailable(why)
    }

    /// blectl's choice of adapter when it need not be powered (reading what BlueZ knows): the
    /// one named, powered or not; else the first powered one by path; else the first one.
    /// - Parameter name: `hci0`-style name; nil for the default choice.
    /// - Throws: ``BLEError/unavailable(_:during:dbusError:)`` `.noAdapter` (none, or not the
    ///   one named; stage ``BLEOperation/Kind/adapter``).
    package static func present(in session: Session, named name: String?) throws -> Adapter {
        try session.withCache { cache in
            let all = cache.paths(with: BlueZ.adapterInterface)
            if let name {
                guard let path = all.first(where: { $0.lastComponent == name[...] }) else {
                    throw BLEError.unavailable(.noAdapter(name), during: BLEOperation(.adapter))
                }
                return Adapter(session: session, path: path)
            }
            let powered = { (path: ObjectPath) in cache.property("Powered", of: path, on: BlueZ.adapterInterface)?.bool == true }
            guard let path = all.first(where: powered) ?? all.first else {
                throw BLEError.unavailable(.noAdapter(nil), during: BLEOperation(.adapter))
            }
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
            cache.paths(with: BlueZ.deviceInterface, under: path).compactMap { cache.advertisement(at: $0) }
        }
    }
}
