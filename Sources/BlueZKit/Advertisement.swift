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
    public init?(path: ObjectPath, properties p: ObjectCache.Properties) {
        guard let address = p["Address"]?.string.flatMap({ BluetoothAddress($0) })
                ?? BluetoothAddress(devicePath: path.rawValue) else { return nil }
        self.address = address
        self.objectPath = path
        addressType = p["AddressType"]?.string
        name = address.realName(p["Name"]?.string)
        rssi = p["RSSI"]?.integer
        txPower = p["TxPower"]?.integer
        appearance = p["Appearance"]?.integer.flatMap { UInt16(exactly: $0) }
        uuids = (p["UUIDs"]?.stringArray ?? []).compactMap({ BluetoothUUID($0) })
        var manufacturer = [UInt16: [UInt8]]()
        for entry in p["ManufacturerData"]?.dictionaryEntries ?? [] {
            guard let id = entry.key.integer, let company = UInt16(exactly: id), let data = entry.value.bytes else { continue }
            manufacturer[company] = data
        }
        manufacturerData = manufacturer
        var service = [BluetoothUUID: [UInt8]]()
        for entry in p["ServiceData"]?.dictionaryEntries ?? [] {
            guard let key = entry.key.string.flatMap({ BluetoothUUID($0) }), let data = entry.value.bytes else { continue }
            service[key] = data
        }
        serviceData = service
        connected = p["Connected"]?.bool ?? false
        receivedAt = wallClockNow()
    }
}
