import DBusKit

extension Adapter {
    /// How long after a lost link ``unavailabilityAfterLinkLoss(within:)`` looks for
    /// Bluetooth itself going away.
    public static let linkLossGrace: Duration = .milliseconds(300)

    /// Whether a link was lost because Bluetooth itself went away, not the device.
    ///
    /// When bluetoothd stops, or the adapter is powered off or removed, bluetoothd first
    /// drops every link (Device1.Connected false, bluez/src/adapter.c adapter_stop), and only
    /// then leaves the bus or reports Powered false; an operation on the link sees the
    /// disconnection first. This waits up to `grace` for the rest.
    /// - Returns: ``BLEError/unavailable(_:)`` (`.bluezLeft`, `.noAdapter`, `.poweredOff`,
    ///   `.busUnreachable`) when Bluetooth went away; nil when it is still there after
    ///   `grace`, or when the task is cancelled.
    public func unavailabilityAfterLinkLoss(within grace: Duration = linkLossGrace) async -> BLEError? {
        let path = self.path
        let name = self.name
        do {
            return try await session.wait(for: BLEOperation(.adapter), timeout: grace) { cache, event -> WaitStep<BLEError> in
                if let gone = event?.unavailability { return .done(gone) }
                guard cache[path, BlueZ.adapterInterface] != nil else { return .done(.unavailable(.noAdapter(name))) }
                if cache.property("Powered", of: path, on: BlueZ.adapterInterface)?.bool == false {
                    return .done(.unavailable(.poweredOff(name)))
                }
                return .keepWaiting
            }
        } catch BLEError.unavailable(let why) {
            return .unavailable(why)    // waits end so when bluetoothd leaves or the bus is lost
        } catch {
            return nil                  // timed out: Bluetooth is still there; or cancelled
        }
    }
}
