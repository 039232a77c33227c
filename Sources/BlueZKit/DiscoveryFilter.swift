import DBusKit

/// A discovery filter: what BlueZ is asked for (Adapter1.SetDiscoveryFilter,
/// bluez/doc/org.bluez.Adapter.rst) and what blectl checks again on each device, because
/// BlueZ merges the filters of all its clients.
public struct DiscoveryFilter: Sendable, Equatable {
    /// Service UUIDs; a device matches when it advertises any of them. Empty: any device.
    public var uuids: [BluetoothUUID]
    /// Minimum RSSI in dBm; nil: no floor.
    public var rssiMin: Int16?
    /// Case-insensitive substrings of the name; a device matches any. Client-side only.
    public var names: [String]
    /// Device addresses; a device matches when it has any of them. Empty: any device.
    /// Client-side only: BlueZ's one filter key for it, `Pattern` (a prefix of the address or
    /// name, one per client), narrows what bluetoothd 5.66 reports to every client while it is
    /// set (src/adapter.c, device_is_discoverable), so it is not sent.
    public var addresses: [BluetoothAddress]
    /// Report every advertisement (DuplicateData true), not only changes.
    public var duplicateData: Bool

    public init(uuids: [BluetoothUUID] = [], rssiMin: Int16? = nil, names: [String] = [],
                addresses: [BluetoothAddress] = [], duplicateData: Bool = false) {
        self.uuids = uuids
        self.rssiMin = rssiMin
        self.names = names
        self.addresses = addresses
        self.duplicateData = duplicateData
    }

    /// The SetDiscoveryFilter argument (`a{sv}`): Transport "le", DuplicateData explicit,
    /// UUIDs and RSSI when asked.
    var dbusValue: DBusValue {
        var entries: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .boolean(duplicateData)]
        if !uuids.isEmpty { entries["UUIDs"] = .stringArray(uuids.map(\.description)) }
        if let rssiMin { entries["RSSI"] = .int16(rssiMin) }
        return .stringVariantDictionary(entries)
    }

    /// Whether a device passes every kind of filter given.
    public func matches(_ advertisement: Advertisement) -> Bool {
        if !addresses.isEmpty, !addresses.contains(advertisement.address) { return false }
        if !uuids.isEmpty, !advertisement.uuids.contains(where: uuids.contains) { return false }
        if let rssiMin {
            guard let rssi = advertisement.rssi, rssi >= Int(rssiMin) else { return false }
        }
        if !names.isEmpty {
            guard let name = advertisement.name?.lowercased(),
                  names.contains(where: { name.contains($0.lowercased()) }) else { return false }
        }
        return true
    }
}
