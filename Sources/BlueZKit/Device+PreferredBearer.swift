import DBusKit

/// Device1.PreferredBearer (bluez/doc/org.bluez.Device.rst; BlueZ 5.80 and later,
/// experimental: exported only when bluetoothd runs with `--experimental` (`-E`), and only
/// for a dual-mode device, one known over BR/EDR and LE). "le" makes Connect take LE
/// whatever bearer bluetoothd saw last (src/device.c select_conn_bearer), so such a device
/// needs no LE sighting first.
///
/// BlueZKit reads it and never sets it: bluetoothd stores the value, and "le" also puts the
/// device on the kernel's auto-connect list, which setting another value back does not undo
/// (src/device.c dev_property_set_prefer_bearer). That is the user's choice to make
/// (`bluetoothctl`, `busctl set-property`), not a side effect of one connection.
extension Device {
    /// Device1.PreferredBearer as bluetoothd exports it ("last-used", "last-seen", "le",
    /// "bredr"); nil where it offers none.
    public var preferredBearer: String? {
        let path = path
        return session.withCache { $0.property("PreferredBearer", of: path, on: BlueZ.deviceInterface)?.string }
    }
}
