import DBusKit

/// The org.bluez.Battery1 properties of a device (bluez/doc/org.bluez.Battery.rst), typed:
/// each field is its property's value, nil when BlueZ does not have it (absent, invalidated,
/// or of an unexpected D-Bus type). BlueZ exports Battery1 only while its battery plugin or
/// a battery provider has a level for the device. Declared once, in ``table``.
public struct BatteryProperties: Sendable, Equatable {
    /// Percentage: the battery level, 0-100 % (BlueZ sends a byte; any integer that fits is
    /// taken, so that a level out of range can be reported as such).
    public var percentage: Int?
    /// Source: where the level comes from, for information: `"GATT Battery Service"` from
    /// BlueZ's battery plugin, else what a battery provider says (`"HFP 1.7"`, `"HID"`);
    /// optional (experimental in BlueZ 5.66).
    public var source: String?

    public init() {}

    /// The table: each Battery1 property blectl reads, and its field.
    public static let table = PropertyTable<BatteryProperties>([
        .init("Percentage", \.percentage),
        .init("Source", \.source),
    ])
}

extension BatteryProperties: InterfaceProperties {
    public static var interface: String { BlueZ.batteryInterface }
}

extension ObjectCache {
    /// The Battery1 properties of the device at `path`; nil when it has no Battery1.
    func battery(of path: ObjectPath) -> BatteryProperties? {
        self[path, BlueZ.batteryInterface].map(BatteryProperties.init)
    }
}
