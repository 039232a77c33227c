import DBusKit

/// A remote device, org.bluez.Device1 (bluez/doc/org.bluez.Device.rst): a cheap handle.
public struct Device: Sendable {
    public let adapter: Adapter
    public let address: BluetoothAddress
    public var session: Session { adapter.session }
    /// `/org/bluez/hci0/dev_C0_FF_EE_00_00_01`
    public var path: ObjectPath { adapter.devicePath(for: address) }

    public init(adapter: Adapter, address: BluetoothAddress) {
        self.adapter = adapter
        self.address = address
    }

    /// The device's current Device1 properties as an ``Advertisement``; nil when unknown.
    public var current: Advertisement? {
        let path = path
        return session.withCache { $0.advertisement(at: path) }
    }

    func operation(_ kind: BLEOperation.Kind, service: BluetoothUUID? = nil, characteristic: BluetoothUUID? = nil,
                   descriptor: BluetoothUUID? = nil) -> BLEOperation {
        BLEOperation(kind, address: address, service: service, characteristic: characteristic, descriptor: descriptor)
    }

    /// A condition that fails with ``BLEError/disconnected(_:reason:)`` (with bluetoothd's
    /// reason when it sent one) when the device object is removed or Connected becomes false:
    /// the one shared by every operation on the link, so a disconnection fails all of them in
    /// the same signal batch.
    func linkLost(during operation: BLEOperation) -> @Sendable (ObjectCache, SessionEvent?) -> (any Error)? {
        let path = path
        return { cache, _ in
            guard let properties = cache[path, BlueZ.deviceInterface] else { return BLEError.disconnected(operation) }
            return properties["Connected"]?.bool == false
                ? BLEError.disconnected(operation, reason: cache.disconnectReason(of: path)) : nil
        }
    }

    /// Finds the device: known to BlueZ already, or seen by scanning before `timeout`.
    /// - Throws: ``BLEError/deviceNotFound(_:)`` when the scan ends without it, the errors of
    ///   ``Adapter/withDiscovery(filter:setupTimeout:_:)``, `CancellationError`.
    public static func find(_ address: BluetoothAddress, on adapter: Adapter, timeout: Duration) async throws -> Device {
        if let known = adapter.knownDevice(address) { return known }
        adapter.session.began(BLEOperation(.deviceLookup, address: address))
        let found = try await adapter.scan(untilHeard: address, timeout: timeout) { true } ?? false
        guard found || adapter.knownDevice(address) != nil else { throw BLEError.deviceNotFound(address) }
        return Device(adapter: adapter, address: address)
    }
}

extension Adapter {
    /// Scans (``withDiscovery(filter:setupTimeout:_:)``, no filter) until `address` is heard,
    /// then returns what `heard` makes of it (nil goes on scanning); nil when `timeout` passes.
    /// Discovery is stopped either way.
    func scan<T: Sendable>(untilHeard address: BluetoothAddress, timeout: Duration,
                           _ heard: @escaping @Sendable () -> T?) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await withDiscovery(filter: DiscoveryFilter(), setupTimeout: timeout) { stream in
                    for try await batch in stream where batch.contains(where: { $0.address == address }) {
                        if let value = heard() { return value }
                    }
                    return nil
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
