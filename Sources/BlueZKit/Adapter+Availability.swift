import DBusKit

extension Adapter {
    /// How long after a failure ``unavailabilityAfterLinkLoss(within:)`` looks for
    /// Bluetooth itself going away.
    public static let linkLossGrace: Duration = .milliseconds(300)

    /// Whether a failure (a lost link, a call that failed) came with Bluetooth itself going
    /// away, not the device.
    ///
    /// When bluetoothd stops, or the adapter is powered off, blocked by rfkill or removed,
    /// bluetoothd first drops every link (Device1.Connected false, bluez/src/adapter.c
    /// adapter_stop) and fails the calls in flight (`org.bluez.Error.Failed`), and only then
    /// leaves the bus or reports Powered false; an operation sees its own failure first. This
    /// looks at the adapter now and, unless `grace` is zero, waits up to `grace` for the rest.
    /// - Returns: ``BLEError/unavailable(_:during:dbusError:)`` (`.bluezLeft`, `.adapterRemoved`,
    ///   `.poweredOff`, `.blocked`, `.busLost`), without a stage, when Bluetooth went away;
    ///   nil when it is still there after `grace`, or when the task is cancelled.
    public func unavailabilityAfterLinkLoss(within grace: Duration = linkLossGrace) async -> BLEError? {
        let path = self.path
        let name = self.name
        if grace <= .zero {
            guard session.isBlueZAvailable else { return .unavailable(.bluezLeft) }
            return session.withCache { $0.unavailability(ofAdapter: path, named: name) }.map { .unavailable($0) }
        }
        do {
            return try await session.wait(for: BLEOperation(.adapter), timeout: grace) { cache, event -> WaitStep<BLEError> in
                if let gone = event?.unavailability { return .done(gone) }
                if let why = cache.unavailability(ofAdapter: path, named: name) { return .done(.unavailable(why)) }
                return .keepWaiting
            }
        } catch BLEError.unavailable(let why, _, let name) {
            return .unavailable(why, dbusError: name)    // waits end so when bluetoothd leaves or the bus is lost
        } catch {
            return nil                  // timed out: Bluetooth is still there; or cancelled
        }
    }

    /// Whether the adapter can be used now, from the cache: nil when it is powered, else why
    /// not (see ``ObjectCache/unavailability(ofAdapter:named:)``).
    public var unavailability: Unavailability? {
        let path = path
        let name = name
        return session.withCache { $0.unavailability(ofAdapter: path, named: name) }
    }
}

extension ObjectCache {
    /// Why the adapter at `path` cannot be used, or nil when it is powered: `.adapterRemoved`
    /// (no Adapter1 object), `.blocked` (Powered false and PowerState `"off-blocked"`: rfkill),
    /// `.poweredOff` (Powered false otherwise).
    func unavailability(ofAdapter path: ObjectPath, named name: String) -> Unavailability? {
        guard let properties = self[path, BlueZ.adapterInterface] else { return .adapterRemoved(name) }
        guard properties["Powered"]?.bool == false else { return nil }
        return properties["PowerState"]?.string == Adapter.PowerState.offBlocked ? .blocked(name) : .poweredOff(name)
    }
}
