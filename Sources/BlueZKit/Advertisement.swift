import DBusKit

/// What a device advertised, as BlueZ's org.bluez.Device1 properties show it
/// (bluez/doc/org.bluez.Device.rst): the properties a scan reads (those ``DeviceProperties``
/// declares for advertisements; the others nil), when they were seen, and where.
@dynamicMemberLookup
public struct Advertisement: Sendable, Equatable {
    /// The Device1 properties a scan reads (those ``DeviceProperties`` declares for
    /// advertisements; the others nil), each also a member of this record (`a.rssi`,
    /// `a.txPower`), except those shown their own way below.
    public var properties: DeviceProperties
    /// Device1.Address, or the address in the object path when that property is unusable.
    public var address: BluetoothAddress
    public var objectPath: ObjectPath
    /// When this record was made, as the wall-clock time since the Unix epoch
    /// (CLOCK_REALTIME): during a scan, the moment the D-Bus message that showed the
    /// sighting was handled.
    public var receivedAt: Duration

    /// Device1.Name when it is a real name: nil when missing, empty, or only the address.
    public var name: String? { address.realName(properties.name) }
    /// Device1.Alias when it is a real name: the name the user gave the device
    /// (`bluetoothctl set-alias`, a desktop's rename), else Name (BlueZ's default); nil when
    /// missing, empty, or only the address (BlueZ's alias of a device without a name).
    public var alias: String? { address.realName(properties.alias) }
    /// Device1.UUIDs: the service UUIDs the device advertises, plus those BlueZ found on an
    /// earlier connection (it keeps them); malformed entries skipped.
    public var uuids: [BluetoothUUID] { properties.uuids ?? [] }
    /// Device1.ManufacturerData: company identifier -> data.
    public var manufacturerData: [UInt16: [UInt8]] { properties.manufacturerData ?? [:] }
    /// Device1.ServiceData: service UUID -> data.
    public var serviceData: [BluetoothUUID: [UInt8]] { properties.serviceData ?? [:] }
    /// Device1.Connected; false when BlueZ does not say.
    public var connected: Bool { properties.connected ?? false }

    /// A Device1 property of the record: `a.rssi` is `a.properties.rssi`.
    @inlinable public subscript<Value>(dynamicMember field: KeyPath<DeviceProperties, Value>) -> Value {
        properties[keyPath: field]
    }

    /// Reads the record from Device1 properties, stamped with the current wall-clock time;
    /// nil when the address is missing or malformed.
    public init?(path: ObjectPath, properties: ObjectCache.Properties) {
        self.init(path: path, advertised: DeviceProperties(advertisementIn: properties.packed))
    }

    /// The record of a device's typed Device1 properties (``DeviceProperties``; those a scan
    /// does not read are ignored), stamped with the current wall-clock time; nil when neither
    /// Address nor the object path gives an address.
    public init?(path: ObjectPath, device p: DeviceProperties) {
        self.init(path: path, advertised: DeviceProperties.advertisementTable.projection(of: p, into: DeviceProperties()))
    }

    /// The record of a device's Device1 properties that holds those a scan reads only (read
    /// or folded through ``DeviceProperties/advertisementTable``).
    init?(path: ObjectPath, advertised p: DeviceProperties) {
        guard let address = p.address ?? BluetoothAddress(devicePath: path.rawValue) else { return nil }
        self.address = address
        objectPath = path
        properties = p
        receivedAt = wallClockNow()
    }
}
