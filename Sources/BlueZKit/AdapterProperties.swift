import DBusKit

/// The org.bluez.Adapter1 properties BlueZKit reads (bluez/doc/org.bluez.Adapter.rst, as of
/// BlueZ 5.66), typed: each field is its property's value, nil when BlueZ does not have it
/// (absent, invalidated, or of an unexpected D-Bus type). PowerState is experimental in 5.66
/// and only there when bluetoothd runs with `--experimental`; older versions lack it, Roles
/// and others. Declared once, in ``table``: ``AdapterInfo`` is read from this record.
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
    /// Modalias: Device ID in modalias form.
    public var modalias: String?

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
    ])
}

extension AdapterProperties: InterfaceProperties {
    public static var interface: String { BlueZ.adapterInterface }
}
