import DBusKit

/// A battery level and where it came from.
public struct BatteryReading: Sendable, Equatable {
    public enum Source: String, Sendable {
        /// org.bluez.Battery1.Percentage (bluez/doc/org.bluez.Battery.rst).
        case battery1
        /// GATT Battery Level 0x2A19 in Battery Service 0x180F (SIG assigned numbers).
        case gatt
        /// A vendor command protocol (``VendorProtocol``).
        case vendor
    }
    /// 0-100 %.
    public var percentage: Int
    public var source: Source
}

extension ConnectedDevice {
    /// How long after services are resolved (when ``batteryLevel(timeout:)`` starts) Battery1
    /// may still appear when neither it nor GATT 0x180F is there: BlueZ's battery plugin adds
    /// it shortly after ServicesResolved. The GATT lookup counts against it.
    public static let battery1Grace: Duration = .milliseconds(1500)

    /// The battery level: Battery1.Percentage if present; else GATT 0x2A19 in 0x180F; else
    /// Battery1 if it appears within ``battery1Grace`` of the call (and within `timeout`).
    /// - Throws: ``BLEError/notSupported(_:_:)`` when the device has neither once the grace
    ///   is over, ``BLEError/deviceProtocolError(_:_:)`` for an empty Battery Level or one
    ///   above 100, the read's errors, ``BLEError/timedOut(_:)`` (when `timeout` ends before
    ///   the grace), ``BLEError/disconnected(_:)``, `CancellationError`.
    public func batteryLevel(timeout: Duration) async throws -> BatteryReading {
        let start = ContinuousClock.now
        let deadline = start + timeout
        let graceEnd = start + Self.battery1Grace
        if let percentage = battery1Percentage { return try Self.checked(percentage, on: device) }
        do {
            let service = try await service(.batteryService, timeout: deadline - .now)
            let level = try characteristic(.batteryLevel, in: service)
            let value = try await read(level, timeout: deadline - .now)
            // Battery Level (SIG 0x2A19): one byte, 0-100 %.
            let operation = device.operation(.read, service: .batteryService, characteristic: .batteryLevel)
            guard let byte = value.first else { throw BLEError.deviceProtocolError(operation, "empty Battery Level value") }
            guard byte <= 100 else { throw BLEError.deviceProtocolError(operation, "Battery Level \(byte) is above 100 %") }
            return BatteryReading(percentage: Int(byte), source: .gatt)
        } catch BLEError.notSupported {
            // Fall through: Battery1 may still appear.
        }
        let path = device.path
        let operation = device.operation(.battery)
        let lost = device.linkLost(during: operation)
        // What the device lacks names the GATT service it has not (0x180F), as the error
        // object's `service` field.
        let lacking = BLEError.notSupported(device.operation(.battery, service: .batteryService),
                                            "\(device.address) has no org.bluez.Battery1 and no GATT service \(BluetoothUUID.batteryService.named)")
        let graceOver = graceEnd <= deadline
        if min(graceEnd, deadline) <= .now, graceOver {
            // The GATT lookup took the whole grace: one look at the cache decides.
            if let percentage = battery1Percentage { return try Self.checked(percentage, on: device) }
            throw lacking
        }
        do {
            let percentage = try await session.wait(for: operation, timeout: max(.zero, min(graceEnd, deadline) - .now)) { cache, event -> WaitStep<Int> in
                if let p = cache.battery(of: path)?.percentage { return .done(p) }
                return lost(cache, event).map { .fail($0) } ?? .keepWaiting
            }
            return try Self.checked(percentage, on: device)
        } catch BLEError.timedOut where graceOver {
            throw lacking
        }
    }

    /// A Battery1.Percentage as a reading: 0-100 (bluez doc/org.bluez.Battery.rst), else a
    /// device protocol error naming the battery lookup.
    static func checked(_ percentage: Int, on device: Device) throws -> BatteryReading {
        guard (0...100).contains(percentage) else {
            throw BLEError.deviceProtocolError(device.operation(.battery), "Battery1 Percentage \(percentage) is outside 0-100")
        }
        return BatteryReading(percentage: percentage, source: .battery1)
    }
}
