import DBusKit

/// Version information, from the Device Information Service 0x180A (SIG assigned numbers)
/// or a vendor command protocol. Absent characteristics are nil.
public struct DeviceInformation: Sendable, Equatable {
    public enum Source: String, Sendable {
        case deviceInformation = "device_information"
        case vendor
    }
    public var source: Source
    /// 0x2A26 Firmware Revision String.
    public var firmwareRevision: String?
    /// 0x2A27 Hardware Revision String.
    public var hardwareRevision: String?
    /// 0x2A28 Software Revision String.
    public var softwareRevision: String?
    /// 0x2A29 Manufacturer Name String.
    public var manufacturerName: String?
    /// 0x2A24 Model Number String.
    public var modelNumber: String?

    public init(source: Source, firmwareRevision: String? = nil, hardwareRevision: String? = nil,
                softwareRevision: String? = nil, manufacturerName: String? = nil, modelNumber: String? = nil) {
        self.source = source
        self.firmwareRevision = firmwareRevision
        self.hardwareRevision = hardwareRevision
        self.softwareRevision = softwareRevision
        self.manufacturerName = manufacturerName
        self.modelNumber = modelNumber
    }
}

extension ConnectedDevice {
    /// Reads the Device Information Service 0x180A: firmware, hardware and software revisions,
    /// manufacturer name and model number (UTF-8 strings; trailing NULs dropped; invalid UTF-8
    /// repaired with U+FFFD). A device with several 0x180A instances has each field read
    /// from the first instance, in handle order, that has its characteristic.
    /// - Throws: ``BLEError/notSupported(_:_:)`` without 0x180A, the reads' errors.
    public func deviceInformation(timeout: Duration) async throws -> DeviceInformation {
        let deadline = ContinuousClock.now + timeout
        let first = try await service(.deviceInformation, timeout: timeout)
        let instances = services.filter { $0.uuid == .deviceInformation }
        let candidates = instances.isEmpty ? [first] : instances
        func string(_ uuid: BluetoothUUID) async throws -> String? {
            guard let characteristic = candidates.lazy.compactMap({ $0.characteristic(uuid) }).first else { return nil }
            var bytes = try await read(characteristic, timeout: deadline - .now)
            while bytes.last == 0 { bytes.removeLast() }
            return String(decoding: bytes, as: UTF8.self)
        }
        return DeviceInformation(
            source: .deviceInformation,
            firmwareRevision: try await string(.firmwareRevision),
            hardwareRevision: try await string(.hardwareRevision),
            softwareRevision: try await string(.softwareRevision),
            manufacturerName: try await string(.manufacturerName),
            modelNumber: try await string(.modelNumber))
    }
}
