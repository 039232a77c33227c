import DBusKit

/// Everything BlueZ knows about a remote device without connecting to it: the properties of
/// its org.bluez.Device1 object (bluez/doc/org.bluez.Device.rst, as of BlueZ 5.66) and the
/// Percentage of its org.bluez.Battery1 (bluez/doc/org.bluez.Battery.rst), as last signalled.
///
/// Every optional field is nil when BlueZ has no value for it: the property is absent (BlueZ
/// leaves out Name, Icon, Class, Appearance, Modalias, RSSI and TxPower when it does not
/// know them, and a bluetoothd older than 5.65 has no Bonded), or it has an unexpected type.
/// Decoding never fails on a value, only on a missing address.
@dynamicMemberLookup
public struct DeviceInfo: Sendable, Equatable {
    /// Every Device1 property BlueZKit reads (``DeviceProperties``), each also a member of
    /// this record (`info.paired`, `info.rssi`), except those shown their own way below.
    public var properties: DeviceProperties
    /// Device1.Address, or the address in the object path when that property is unusable.
    public var address: BluetoothAddress
    /// `/org/bluez/hci0/dev_C0_FF_EE_00_00_01`
    public var objectPath: ObjectPath
    /// Battery1.Percentage (0-100 %): present only while BlueZ's battery plugin or a
    /// battery provider has a level for the device.
    public var batteryPercentage: Int?

    /// The adapter the device belongs to: Device1.Adapter, else the object path's parent
    /// (`/org/bluez/hci0`).
    public var adapterPath: ObjectPath { properties.adapter ?? objectPath.parent ?? "/" }
    /// `hci0`
    public var adapterName: String { String(adapterPath.lastComponent) }
    /// Device1.Name when it is a real name: nil when missing, empty, or only the address
    /// (as ``Advertisement/name``).
    public var name: String? { address.realName(properties.name) }
    /// Device1.UUIDs (advertised service UUIDs, plus those resolved on a connection);
    /// malformed entries skipped.
    public var uuids: [BluetoothUUID] { properties.uuids ?? [] }
    /// Device1.ManufacturerData: company identifier -> data.
    public var manufacturerData: [UInt16: [UInt8]] { properties.manufacturerData ?? [:] }
    /// Device1.ServiceData: service UUID -> data.
    public var serviceData: [BluetoothUUID: [UInt8]] { properties.serviceData ?? [:] }

    /// A Device1 property of the record: `info.paired` is `info.properties.paired`.
    @inlinable public subscript<Value>(dynamicMember field: KeyPath<DeviceProperties, Value>) -> Value {
        properties[keyPath: field]
    }

    /// Reads the record from an object's Device1 properties and, when it has one, its
    /// Battery1 properties.
    /// - Returns: nil when neither Device1.Address nor the object path gives an address.
    public init?(path: ObjectPath, device p: ObjectCache.Properties, battery: ObjectCache.Properties? = nil) {
        let device = DeviceProperties(p)
        guard let address = device.address ?? BluetoothAddress(devicePath: path.rawValue) else { return nil }
        self.address = address
        objectPath = path
        properties = device
        batteryPercentage = battery.flatMap { BatteryProperties($0).percentage }
    }

    /// Reads the record of the Device1 object at `path` in `cache`; nil when there is none
    /// (or it has no usable address).
    public init?(path: ObjectPath, in cache: ObjectCache) {
        guard let device = cache[path, BlueZ.deviceInterface] else { return nil }
        self.init(path: path, device: device, battery: cache[path, BlueZ.batteryInterface])
    }
}

extension Adapter {
    /// What BlueZ knows of the device at `address` under this adapter; nil when it has no
    /// Device1 object for it. No bus traffic: read from the session's cache.
    public func deviceInfo(_ address: BluetoothAddress) -> DeviceInfo? {
        let path = devicePath(for: address)
        return session.withCache { DeviceInfo(path: path, in: $0) }
    }

    /// Every device BlueZ has under this adapter (cached ones included, whether heard lately
    /// or not), sorted by object path, that is by address. No bus traffic.
    public var deviceInfos: [DeviceInfo] {
        let path = path
        return session.withCache { cache in
            cache.paths(with: BlueZ.deviceInterface, under: path).compactMap { DeviceInfo(path: $0, in: cache) }
        }
    }
}

extension DeviceInfo {
    /// What BlueZ knows of the device at `address`: read from the cache when BlueZ has it,
    /// else looked for by scanning on `adapter` for up to `timeout` and read the moment the
    /// scan hears it (before discovery stops, when BlueZ still has its RSSI and has not yet
    /// dropped a temporary device).
    /// - Parameters:
    ///   - address: the device.
    ///   - adapter: the adapter to look on (powered, when a scan is needed).
    ///   - timeout: the limit for the scan; `.zero` means no scan.
    /// - Throws: ``BLEError/deviceNotFound(_:)`` when BlueZ does not know the device and the
    ///   scan ends without hearing it; the errors of
    ///   ``Adapter/withDiscovery(filter:setupTimeout:_:)`` (``BLEError/unavailable(_:)``
    ///   when the adapter is powered off); `CancellationError` (discovery is stopped first).
    public static func find(_ address: BluetoothAddress, on adapter: Adapter, timeout: Duration) async throws -> DeviceInfo {
        if let known = adapter.deviceInfo(address) { return known }
        guard timeout > .zero else { throw BLEError.deviceNotFound(address) }
        let heard = try await adapter.scan(untilHeard: address, timeout: timeout) { adapter.deviceInfo(address) }
        guard let info = heard ?? adapter.deviceInfo(address) else { throw BLEError.deviceNotFound(address) }
        return info
    }
}
