import DBusKit

/// The org.bluez.Adapter1 properties BlueZKit reads (bluez/doc/org.bluez.Adapter.rst, as of
/// BlueZ 5.82), typed: each field is its property's value, nil when BlueZ does not have it
/// (absent, invalidated, or of an unexpected D-Bus type). PowerState is experimental in 5.66
/// to 5.72 and only there when bluetoothd runs with `--experimental`; Manufacturer and
/// Version are there from 5.71, Connectable from 5.79; older versions lack Roles and others. Declared once, in ``table``: ``AdapterInfo`` is read from this record.
///
/// Adding a property: its field here and its line in ``table`` (the D-Bus name and the
/// field). blectl's `adapters` shows it, in the table's order.
public struct AdapterProperties: Sendable, Equatable {
    /// Address: the controller's own address.
    public var address: BluetoothAddress?
    /// AddressType: `"public"` or `"random"`.
    public var addressType: String?
    /// Name: the system name (pretty hostname; `"host #2"` for a second adapter).
    public var systemName: String?
    /// Alias: the friendly name other devices see; defaults to ``systemName``.
    public var alias: String?
    /// Class: the 24-bit Class of Device (0 while powered off).
    public var adapterClass: UInt32?
    /// Powered.
    public var powered: Bool?
    /// PowerState: `"on"`, `"off"`, `"off-enabling"`, `"on-disabling"` or `"off-blocked"`
    /// (rfkill); experimental in BlueZ 5.66.
    public var powerState: String?
    /// Discovering: some client's discovery is running.
    public var discovering: Bool?
    /// Pairable.
    public var pairable: Bool?
    /// PairableTimeout in seconds, 0 for none.
    public var pairableTimeout: Int?
    /// Discoverable.
    public var discoverable: Bool?
    /// DiscoverableTimeout in seconds, 0 for none.
    public var discoverableTimeout: Int?
    /// Roles: `"central"`, `"peripheral"`, `"central-peripheral"`.
    public var roles: [String]?
    /// UUIDs: the local services (malformed entries skipped).
    public var uuids: [BluetoothUUID]?
    /// Modalias: Device ID in modalias form; bluetoothd's own (`usb:v1D6Bp0246d0542`) carries
    /// its version (0x0542: 5.66).
    public var modalias: String?
    /// Connectable: the adapter accepts connections (BlueZ 5.79 and later).
    public var connectable: Bool?
    /// Manufacturer: the controller's manufacturer, a company identifier
    /// (``AssignedNumbers/companyName(for:)``; BlueZ 5.71 and later).
    public var manufacturer: UInt16?
    /// Version: the controller's HCI version number (0x0B: Core 5.2,
    /// ``AssignedNumbers/coreVersionName(for:)``; BlueZ 5.71 and later).
    public var version: Int?
    /// ExperimentalFeatures: UUIDs of the experimental features enabled (absent when none).
    public var experimentalFeatures: [String]?

    public init() {}

    /// The table: each Adapter1 property blectl reads, and its field, in the order
    /// `adapters` shows them.
    public static let table = PropertyTable<AdapterProperties>([
        .init("Address", \.address),
        .init("AddressType", \.addressType),
        .init("Name", \.systemName),
        .init("Alias", \.alias),
        .init("Class", \.adapterClass),
        .init("Powered", \.powered),
        .init("PowerState", \.powerState),
        .init("Discovering", \.discovering),
        .init("Pairable", \.pairable),
        .init("PairableTimeout", \.pairableTimeout),
        .init("Discoverable", \.discoverable),
        .init("DiscoverableTimeout", \.discoverableTimeout),
        .init("Roles", \.roles),
        .init("UUIDs", \.uuids),
        .init("Modalias", \.modalias),
        .init("Connectable", \.connectable),
        .init("Manufacturer", \.manufacturer),
        .init("Version", \.version),
        .init("ExperimentalFeatures", \.experimentalFeatures),
    ])
}

extension AdapterProperties: InterfaceProperties {
    public static var interface: String { BlueZ.adapterInterface }
}
