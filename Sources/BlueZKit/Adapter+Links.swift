import DBusKit

extension Adapter {
    /// A session watcher that reports the links of this adapter's devices coming up and
    /// going down (Device1.Connected, a device object added connected or removed), each
    /// change once, and the end of everything when bluetoothd, the bus or the adapter goes
    /// away, or org.bluez changes hands (``BLEError/unavailable(_:during:dbusError:)`` with `operation`). What a
    /// peripheral of this host sees of the centrals connecting to it: BlueZ 5.66 does not
    /// say which side opened a link. The closures run after the session lock is released,
    /// in bus order.
    func linkWatcher(operation: BLEOperation,
                     link: @escaping @Sendable (BluetoothAddress, _ connected: Bool) -> Void,
                     ended: @escaping @Sendable (any Error) -> Void) -> Session.Watcher {
        let adapterPath = path
        let adapterName = name
        let connected = Lock(Set<ObjectPath>())
        return { _, event in
            guard let event else { return nil }
            if let gone = event.unavailability {
                return { ended(gone.during(operation)) }
            }
            // A new owner of org.bluez without the old one leaving first (a client queued for
            // the name took it over as bluetoothd exited): what was registered went with the
            // old owner, and the new one is not trusted to be bluetoothd.
            if case .bluezAppeared = event {
                return { ended(BLEError.unavailable(.bluezLeft, during: operation)) }
            }
            let change: (BluetoothAddress, Bool)?
            switch event {
            case .removed(adapterPath, let interfaces) where interfaces.contains(BlueZ.adapterInterface):
                return { ended(BLEError.unavailable(.adapterRemoved(adapterName), during: operation)) }
            case .changed(let device, BlueZ.deviceInterface, let changed, _) where device.isChild(of: adapterPath):
                change = Self.linkChange(of: device, to: changed["Connected"]?.bool, in: connected)
            case .added(let device, let interfaces) where device.isChild(of: adapterPath):
                change = Self.linkChange(of: device, to: interfaces[BlueZ.deviceInterface]?["Connected"]?.bool, in: connected)
            case .removed(let device, let interfaces) where interfaces.contains(BlueZ.deviceInterface):
                change = Self.linkChange(of: device, to: false, in: connected)
            default:
                change = nil
            }
            guard let change else { return nil }
            return { link(change.0, change.1) }
        }
    }

    /// `device`'s address and its new state when its Connected becoming `value` changes
    /// what `connected` holds.
    private static func linkChange(of device: ObjectPath, to value: Bool?, in connected: Lock<Set<ObjectPath>>) -> (BluetoothAddress, Bool)? {
        guard let value, let address = BluetoothAddress(devicePath: device.rawValue) else { return nil }
        let changed = connected.withLock { set in value ? set.insert(device).inserted : set.remove(device) != nil }
        return changed ? (address, value) : nil
    }
}

extension ObjectPath {
    /// Whether this path is directly under `parent`.
    fileprivate func isChild(of parent: ObjectPath) -> Bool {
        let prefix = parent.rawValue + "/"
        return rawValue.hasPrefix(prefix) && !rawValue.dropFirst(prefix.count).contains("/")
    }
}
