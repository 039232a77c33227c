import DBusKit

/// What a device advertised, as BlueZ's org.bluez.Device1 properties show it
/// (bluez/doc/org.bluez.Device.rst).
public struct Advertisement: Sendable, Equatable {
    public var address: BluetoothAddress
    /// "public" or "random" (Device1.AddressType), nil when BlueZ does not say.
    public var addressType: String?
    /// Device1.Name when it is a real name: nil when missing, empty, or only the address.
    public var name: String?
    /// Device1.RSSI in dBm; nil when not heard during discovery (BlueZ invalidates it when discovery stops).
    public var rssi: Int?
    /// Device1.TxPower in dBm.
    public var txPower: Int?
    /// Device1.Appearance: the GAP appearance value (category in bits 15–6, subcategory in
    /// bits 5–0; names from ``AssignedNumbers/appearanceNames(for:)``); nil when BlueZ has none.
    public var appearance: UInt16?
    /// Device1.UUIDs: the service UUIDs the device advertises, plus those BlueZ found on an
    /// earlier connection (it keeps them); malformed entries skipped.
    public var uuids: [BluetoothUUID]
    /// Device1.ManufacturerData: company identifier -> data.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Device1.ServiceData: service UUID -> data.
    public var serviceData: [BluetoothUUID: [UInt8]]
    public var connected: Bool
    public var objectPath: ObjectPath
    /// When this record was made, as the wall-clock time since the Unix epoch
    /// (CLOCK_REALTIME): during a scan, the moment the D-Bus message that showed the
    /// sighting was handled.
    public var receivedAt: Duration

    /// Reads the record from Device1 properties, stamped with the current wall-clock time;
    /// nil when the address is missing or malformed.
    public init?(path: ObjectPath, properties: ObjectCache.Properties) {
        self.init(path: path, device: DeviceProperties(properties))
    }

    /// The record of a device's typed Device1 properties (``DeviceProperties``), stamped with
    /// the current wall-clock time; nil when neither Address nor the object path gives an
    /// address.
    public init?(path: ObjectPath, device p: DeviceProperties) {
        guard let address = p.address ?? BluetoothAddress(devicePath: path.rawValue) else { return nil }
        self.address = address
        objectPath = path
        addressType = p.addressType
        name = address.realName(p.name)
        rssi = p.rssi
        txPower = p.txPower
        appearance = p.appearance
        uuids = p.uuids ?? []
        manufacturerData = p.manufacturerData ?? [:]
        serviceData = p.serviceData ?? [:]
        connected = p.connected ?? false
        receivedAt = wallClockNow()
    }
}
