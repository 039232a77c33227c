import DBusKit
import Glibc

/// Dual-mode devices (one public address, BR/EDR and LE): BlueZ connects over the bearer
/// it saw most recently (src/device.c select_conn_bearer), so ``Device/connect(timeout:)``
/// first has such a device heard over LE, and after a BR/EDR failure drops that link and
/// tries again in a later wall-clock second.
extension Device {
    /// How long an LE-only discovery run before Connect waits to hear the device (one
    /// advertisement refreshes BlueZ's LE sighting): 2 s. Not heard by then (it advertises
    /// rarely, or another client's scan already reported it unchanged), Connect goes ahead.
    public static let leSightingWait: Duration = .seconds(2)

    /// Whether BlueZ may take BR/EDR for Connect: a public address and a Class of Device
    /// (which only a BR/EDR inquiry or connection gives).
    var mayConnectOverBREDR: Bool {
        let path = path
        return session.withCache { cache in
            guard let properties = cache[path, BlueZ.deviceInterface] else { return false }
            return properties["Class"] != nil && properties["AddressType"]?.string != "random"
        }
    }

    /// Whether Connect failed on the BR/EDR bearer: a `br-connection-*` reason (bluez
    /// src/error.h ERR_BREDR_CONN_*), or an `org.bluez.Error.BREDR.*` name (BlueZ 5.80 on).
    static func isBREDRFailure(_ error: BLEError) -> Bool {
        switch error {
        case .failed(_, let name, let message), .busy(_, let name, let message):
            message.hasPrefix("br-connection-") || name.hasPrefix("org.bluez.Error.BREDR.")
        default: false
        }
    }

    /// Runs an LE-only discovery until the device is heard or `wait` passes, so that BlueZ's
    /// bearer choice sees LE last. Not heard is not an error: Connect decides.
    /// - Throws: the errors of ``Adapter/withDiscovery(filter:setupTimeout:_:)`` that end
    ///   Bluetooth (``BLEError/unavailable(_:)``), `CancellationError`.
    func hearOverLE(within wait: Duration) async throws {
        guard wait > .zero else { return }
        do {
            _ = try await adapter.scan(untilHeard: address, timeout: wait) { true }
        } catch let error as BLEError {
            if case .unavailable = error { throw error }
            if case .permissionDenied = error { throw error }
        }
    }

    /// After Connect failed over BR/EDR with the ACL left up (Connected true): Disconnect it
    /// and wait until it is down (BlueZ's disconnect timer), within `deadline`.
    func dropBREDRLink(deadline: ContinuousClock.Instant, operation: BLEOperation) async throws {
        guard isConnected else { return }
        do {
            try await disconnect(timeout: deadline - .now)
        } catch BLEError.timedOut {
            throw BLEError.timedOut(operation)
        }
        try await waitUntilDisconnected(timeout: deadline - .now, operation: operation)
    }

    /// Sleeps until the wall clock (`time(2)`, BlueZ's last-seen clock) has passed `second`
    /// (at most 1 s), or throws ``BLEError/timedOut(_:)`` (connect) when `deadline` comes first.
    static func waitForWallClockSecond(after second: time_t, deadline: ContinuousClock.Instant,
                                               operation: BLEOperation) async throws {
        while time(nil) <= second {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let left = Duration.nanoseconds(1_000_000_000 - Int64(now.tv_nsec)) + .milliseconds(5)
            guard deadline - .now > left else { throw BLEError.timedOut(operation) }
            try await Task.sleep(for: left)
        }
    }
}
