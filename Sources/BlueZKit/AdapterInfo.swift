import DBusKit

/// What BlueZ says about a local adapter: the properties of its org.bluez.Adapter1 object
/// (bluez/doc/org.bluez.Adapter.rst, as of BlueZ 5.66), as last signalled.
///
/// Every optional field is nil when BlueZ has no value for it: the property is absent
/// (PowerState is experimental in 5.66 and only there when bluetoothd runs with
/// `--experimental`; older versions lack it, Roles and others), or it has an unexpected
/// type. Decoding never fails on a value.
public struct AdapterInfo: Sendable, Equatable {
    /// `/org/bluez/hci0`
    public var path: ObjectPath
    /// Adapter1.Address: the controller's own address.
    public var address: BluetoothAddress?
    /// Adapter1.AddressType: `"public"` or `"random"`.
    public var addressType: String?
    /// Adapter1.Name: the system name (pretty hostname; `"host #2"` for a second adapter).
    public var systemName: String?
    /// Adapter1.Alias: the friendly name other devices see; defaults to ``systemName``.
    public var alias: String?
    /// Adapter1.Class: the 24-bit Class of Device (0 while powered off).
    public var adapterClass: UInt32?
    /// Adapter1.Powered.
    public var powered: Bool?
    /// Adapter1.PowerState: `"on"`, `"off"`, `"off-enabling"`, `"on-disabling"` or
    /// `"off-blocked"` (rfkill); experimental in BlueZ 5.66.
    public var powerState: String?
    /// Adapter1.Discoverable.
    public var discoverable: Bool?
    /// Adapter1.DiscoverableTimeout in seconds, 0 for none.
    public var discoverableTimeout: Int?
    /// Adapter1.Pairable.
    public var pairable: Bool?
    /// Adapter1.PairableTimeout in seconds, 0 for none.
    public var pairableTimeout: Int?
    /// Adapter1.Discovering: some client's discovery is running.
    public var discovering: Bool?
    /// Adapter1.Roles: `"central"`, `"peripheral"`, `"central-peripheral"`; nil when absent.
    public var roles: [String]?
    /// Adapter1.UUIDs: the local services; malformed entries skipped.
    public var uuids: [BluetoothUUID]
    /// Adapter1.Modalias: Device ID in modalias form.
    public var modalias: String?

    /// `hci0`
    public var name: String { String(path.lastComponent) }

    /// Reads the record from an object's Adapter1 properties.
    public init(path: ObjectPath, properties p: ObjectCache.Properties) {
        self.path = path
        address = p["Address"]?.string.flatMap { BluetoothAddress($0) }
        addressType = p["AddressType"]?.string
        systemName = p["Name"]?.string
        alias = p["Alias"]?.string
        adapterClass = p["Class"]?.integer.flatMap { UInt32(exactly: $0) }
        powered = p["Powered"]?.bool
        powerState = p["PowerState"]?.string
        discoverable = p["Discoverable"]?.bool
        discoverableTimeout = p["DiscoverableTimeout"]?.integer
        pairable = p["Pairable"]?.bool
        pairableTimeout = p["PairableTimeout"]?.integer
        discovering = p["Discovering"]?.bool
        roles = p["Roles"]?.stringArray
        uuids = (p["UUIDs"]?.stringArray ?? []).compactMap { BluetoothUUID($0) }
        modalias = p["Modalias"]?.string
    }
}

extension Adapter {
    /// This adapter's Adapter1 properties; nil when BlueZ no longer has it. No bus traffic:
    /// read from the session's cache.
    public var info: AdapterInfo? {
        let path = path
        return session.withCache { cache in cache[path, BlueZ.adapterInterface].map { AdapterInfo(path: path, properties: $0) } }
    }
}
