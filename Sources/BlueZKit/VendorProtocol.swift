import DBusKit

/// A vendor command protocol: commands written to one characteristic, answers notified on
/// another, the answer's first byte = command | 0x80.
///
/// Version: write 0x01, answer 0x81 major minor patch. Battery: write 0x02, answer 0x82 percent.
public struct VendorProtocol: Sendable, Equatable {
    public var service: BluetoothUUID
    public var writeCharacteristic: BluetoothUUID
    public var notifyCharacteristic: BluetoothUUID

    public init(service: BluetoothUUID, writeCharacteristic: BluetoothUUID, notifyCharacteristic: BluetoothUUID) {
        self.service = service
        self.writeCharacteristic = writeCharacteristic
        self.notifyCharacteristic = notifyCharacteristic
    }

    public static let versionCommand: UInt8 = 0x01
    public static let batteryCommand: UInt8 = 0x02

    /// Sends `command` and returns the answer's payload (after the response code).
    /// - Throws: ``BLEError/notSupported(_:_:)`` when the service or a characteristic is missing,
    ///   ``BLEError/deviceProtocolError(_:_:)`` for an answer shorter than `payloadLength`, the
    ///   errors of ``CommandChannel/request(_:on:write:notify:responsePrefix:count:timeout:)``.
    public func send(_ command: UInt8, payloadLength: Int, on device: ConnectedDevice, timeout: Duration) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        let gattService = try await device.service(service, timeout: timeout)
        let write = try device.characteristic(writeCharacteristic, in: gattService)
        let notify = try device.characteristic(notifyCharacteristic, in: gattService)
        let answer = try await CommandChannel.request([command], on: device, write: write, notify: notify,
                                                      responsePrefix: [command | 0x80], timeout: deadline - .now)[0]
        // The answer's bytes come from the device: check the length before taking any.
        guard payloadLength >= 0, answer.count >= 1 + payloadLength else {
            throw BLEError.deviceProtocolError(device.device.operation(.response, service: service, characteristic: notifyCharacteristic),
                                         "answer \(answer) is shorter than \(1 + max(0, payloadLength)) bytes")
        }
        return Array(answer.dropFirst().prefix(payloadLength))
    }

    /// The firmware version as "major.minor.patch".
    public func version(of device: ConnectedDevice, timeout: Duration) async throws -> DeviceInformation {
        let bytes = try await send(Self.versionCommand, payloadLength: 3, on: device, timeout: timeout)
        return DeviceInformation(source: .vendor, firmwareRevision: "\(bytes[0]).\(bytes[1]).\(bytes[2])")
    }

    /// The battery level in percent.
    public func batteryLevel(of device: ConnectedDevice, timeout: Duration) async throws -> BatteryReading {
        let bytes = try await send(Self.batteryCommand, payloadLength: 1, on: device, timeout: timeout)
        guard bytes[0] <= 100 else {
            throw BLEError.deviceProtocolError(device.device.operation(.response, service: service, characteristic: notifyCharacteristic),
                                               "battery level \(bytes[0]) is above 100 %")
        }
        return BatteryReading(percentage: Int(bytes[0]), source: .vendor)
    }
}
