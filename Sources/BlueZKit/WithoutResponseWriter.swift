import DBusKit

/// Writes without response to one characteristic the fastest way BlueZ grants, inside
/// ``ConnectedDevice/withWritesWithoutResponse(_:timeout:_:)``: through the socket of
/// AcquireWrite (``AcquiredWrite``) when BlueZ hands one over, else by
/// GattCharacteristic1.WriteValue with type "command" (bluez/doc/org.bluez.GattCharacteristic.rst).
///
/// Either way one ``write(_:timeout:)`` is one ATT Write Command of at most
/// ``maximumValueLength`` (MTU - 3, 512 at most) bytes, and the values go out in the order written
/// (write from one task). Through the socket a write waits while it is full; by WriteValue
/// each write waits for BlueZ's reply (bluetoothd answers once the command is queued).
public struct WithoutResponseWriter: Sendable {
    /// The characteristic written.
    public let characteristic: GATTCharacteristic
    /// The socket, when AcquireWrite granted one; nil when writing by WriteValue.
    public let acquired: AcquiredWrite?
    /// Why AcquireWrite was refused (the writer then uses WriteValue); nil when acquired.
    public let refusal: BLEError?
    /// The ATT MTU in bytes: the one AcquireWrite returned, else the characteristic's `MTU`
    /// property (BlueZ 5.62 and later), else 23 (the LE default, Core Vol 3 Part F 3.2.8).
    public let mtu: Int
    let device: ConnectedDevice

    init(acquired: AcquiredWrite, device: ConnectedDevice) {
        characteristic = acquired.characteristic
        self.acquired = acquired
        refusal = nil
        mtu = acquired.mtu
        self.device = device
    }

    init(characteristic: GATTCharacteristic, refusal: BLEError, device: ConnectedDevice) {
        self.characteristic = characteristic
        acquired = nil
        self.refusal = refusal
        let path = characteristic.path
        let advertised = device.session.withCache { $0[path, BlueZ.gattCharacteristicInterface].flatMap { GATTCharacteristicProperties($0).mtu } }
        mtu = max(Self.defaultMTU, advertised.map(Int.init) ?? Self.defaultMTU)
        self.device = device
    }

    /// The ATT MTU of an LE link before any exchange (Core Vol 3 Part F 3.2.8).
    public static let defaultMTU = 23

    /// Whether the writes go through AcquireWrite's socket.
    public var isAcquired: Bool { acquired != nil }

    /// The longest value one write carries: MTU - 3 bytes, 512 at most
    /// (``ATT/maximumWriteWithoutResponseLength(mtu:)``).
    public var maximumValueLength: Int { ATT.maximumWriteWithoutResponseLength(mtu: mtu) }

    /// Writes `value` as one ATT Write Command.
    /// - Parameters:
    ///   - value: 0 to ``maximumValueLength`` bytes.
    ///   - timeout: through the socket, the longest wait for room (nil: no limit); by
    ///     WriteValue, the limit for BlueZ's reply (nil: 30 s).
    /// - Throws: ``BLEError/notSupported(_:_:)`` for a value that is too long (nothing is
    ///   sent), ``BLEError/disconnected(_:)``, ``BLEError/timedOut(_:)`` (write), the errors
    ///   of ``AcquiredWrite/write(_:timeout:)`` or ``ConnectedDevice/write(_:_:type:timeout:)``,
    ///   `CancellationError`.
    public func write(_ value: [UInt8], timeout: Duration?) async throws {
        if let acquired {
            try await acquired.write(value, timeout: timeout)
            return
        }
        guard value.count <= maximumValueLength else {
            let operation = BLEOperation(.write, address: device.device.address, service: characteristic.service,
                                         characteristic: characteristic.uuid)
            throw BLEError.notSupported(operation, "a value of \(value.count) bytes: a write without response carries at most \(maximumValueLength) (MTU \(mtu) - 3, at most 512)")
        }
        try await device.write(characteristic, value, type: .command, timeout: timeout ?? .seconds(30))
    }

    /// Through the socket: waits until bluetoothd has taken every value
    /// (``AcquiredWrite/flush(timeout:)``). By WriteValue there is nothing to wait for (each
    /// write waited for its reply).
    public func flush(timeout: Duration?) async throws {
        try await acquired?.flush(timeout: timeout)
    }
}
