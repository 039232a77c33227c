import DBusKit

/// The org.bluez.Device1 properties BlueZKit reads (bluez/doc/org.bluez.Device.rst), typed:
/// each field is its property's value, nil when BlueZ does not have it (absent, invalidated,
/// or of an unexpected D-Bus type). Declared once, in ``table``: ``Advertisement`` and
/// ``DeviceInfo`` are read from this record, and a scan folds each PropertiesChanged into it.
///
/// Adding a property: its field here and its line in ``table`` (the D-Bus name, the field,
/// and `.advertisement` when a scan reads it). blectl's `info` and `devices` show every
/// property in the table, its `scan` the advertisement's (but Alias, which its name filter
/// reads), in the table's order.
public struct DeviceProperties: Sendable, Equatable {
    /// Address: the device's Bluetooth address (nil too when BlueZ's is malformed).
    public var address: BluetoothAddress?
    /// AddressType: `"public"` or `"random"`.
    public var addressType: String?
    /// Name: the remote name (advertised or read over GATT), as BlueZ has it.
    public var name: String?
    /// Alias: the name set by a user, else Name, else the address with `-` separators.
    public var alias: String?
    /// Icon: a freedesktop.org icon name BlueZ derives from Class or Appearance.
    public var icon: String?
    /// Class: the 24-bit Class of Device of a BR/EDR device.
    public var deviceClass: UInt32?
    /// Appearance: the GAP Appearance (Bluetooth SIG Assigned Numbers 2.6).
    public var appearance: UInt16?
    /// UUIDs: the service UUIDs advertised, plus those resolved on a connection (malformed
    /// entries skipped).
    public var uuids: [BluetoothUUID]?
    /// Paired: the pairing process has completed.
    public var paired: Bool?
    /// Bonded (BlueZ 5.65 and later): the keys exchanged on pairing are stored.
    public var bonded: Bool?
    /// Trusted.
    public var trusted: Bool?
    /// Blocked: incoming connections are rejected.
    public var blocked: Bool?
    /// Connected.
    public var connected: Bool?
    /// ServicesResolved: GATT service discovery has completed on the current link.
    public var servicesResolved: Bool?
    /// RSSI in dBm: only while a discovery hears the device.
    public var rssi: Int?
    /// TxPower in dBm: the advertised transmit power.
    public var txPower: Int?
    /// ManufacturerData: company identifier → data (malformed entries skipped).
    public var manufacturerData: [UInt16: [UInt8]]?
    /// ServiceData: service UUID → data (malformed entries skipped).
    public var serviceData: [BluetoothUUID: [UInt8]]?
    /// Modalias: Device ID in the kernel's modalias form (`"usb:v046Dp4023d0006"`).
    public var modalias: String?
    /// Adapter: the object path of the adapter the device belongs to.
    public var adapter: ObjectPath?

    public init() {}

    /// The table: each Device1 property blectl reads, and its field.
    public static let table = PropertyTable<DeviceProperties>([
        .init("Address", \.address, in: .advertisement),
        .init("AddressType", \.addressType, in: .advertisement),
        .init("Name", \.name, in: .advertisement),
        .init("Alias", \.alias, in: .advertisement),
        .init("Paired", \.paired),
        .init("Bonded", \.bonded),
        .init("Trusted", \.trusted),
        .init("Blocked", \.blocked),
        .init("Connected", \.connected, in: .advertisement),
        .init("ServicesResolved", \.servicesResolved),
        .init("RSSI", \.rssi, in: .advertisement),
        .init("TxPower", \.txPower, in: .advertisement),
        .init("Appearance", \.appearance, in: .advertisement),
        .init("Icon", \.icon),
        .init("Class", \.deviceClass),
        .init("Modalias", \.modalias),
        .init("UUIDs", \.uuids, in: .advertisement),
        .init("ManufacturerData", \.manufacturerData, in: .advertisement),
        .init("ServiceData", \.serviceData, in: .advertisement),
        .init("Adapter", \.adapter),
    ])

    /// The properties an ``Advertisement`` reads (``PropertyUses/advertisement``).
    package static let advertisementTable = table.only(.advertisement)

    init(packed: PackedProperties) {
        Self.table.fold(packed, into: &self)
    }

    /// The record of the properties an ``Advertisement`` reads (the others nil).
    init(advertisementIn packed: PackedProperties) {
        Self.advertisementTable.fold(packed, into: &self)
    }

    /// ``fold(_:invalidated:)`` of the properties an ``Advertisement`` reads only.
    mutating func foldAdvertisement(_ changed: ObjectCache.Properties, invalidated: [String]) {
        Self.advertisementTable.fold(changed.packed, invalidated: invalidated, into: &self)
    }
}

extension DeviceProperties: InterfaceProperties {
    public static var interface: String { BlueZ.deviceInterface }
}
