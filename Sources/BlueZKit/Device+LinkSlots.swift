import DBusKit

/// A controller holds only so many links at once (often 5 to 7 LE links, fewer on some
/// chips), and BlueZ keeps each idle link up for its disconnect timer (2 s) after the last
/// client leaves it. A Connect beyond what the controller holds fails: bluetoothd 5.66 reports
/// every LE connection the kernel could not make as `org.bluez.Error.Failed`
/// "le-connection-abort-by-local" (src/device.c att_connect_cb, src/error.c), newer versions
/// may say "le-connection-concurrent-connection-limit". Such a Connect is worth sending again
/// once one of the adapter's other links has gone down (bleak-retry-connector's out-of-slots
/// class).
extension Device {
    /// Whether `error` may be the controller out of links: an LE connection aborted locally,
    /// or BlueZ saying so.
    static func mayBeOutOfLinks(_ error: BLEError) -> Bool {
        guard case .failed(_, BlueZ.Error.failed, let message) = error else { return false }
        return message == BlueZ.FailureMessage.leConnectionAbortByLocal || BLEError.transientFailureMessages[message] == .outOfSlots
    }

    /// The other devices of this device's adapter whose link is up (Device1.Connected true).
    func otherLinks() -> Set<ObjectPath> {
        let path = path
        guard let adapterPath = path.parent else { return [] }
        return session.withCache { cache in
            Set(cache.paths(with: BlueZ.deviceInterface, under: adapterPath).filter {
                $0 != path && cache.property("Connected", of: $0, on: BlueZ.deviceInterface)?.bool == true
            })
        }
    }

    /// Waits until one of `links` is down (Connected false, or its object removed), before
    /// `deadline`.
    /// - Returns: true when one went down; false at `deadline`.
    /// - Throws: `CancellationError`.
    func waitForLinkDown(among links: Set<ObjectPath>, deadline: ContinuousClock.Instant, operation: BLEOperation) async throws -> Bool {
        do {
            try await session.wait(for: operation, timeout: deadline - .now) { cache, _ -> WaitStep<Void> in
                links.contains { cache.property("Connected", of: $0, on: BlueZ.deviceInterface)?.bool != true } ? .done(()) : .keepWaiting
            }
            return true
        } catch BLEError.timedOut {
            return false
        }
    }
}
