import DBusKit

/// A discovery filter: what BlueZ is asked for (Adapter1.SetDiscoveryFilter,
/// bluez/doc/org.bluez.Adapter.rst) and what is checked on each device reported, because
/// BlueZ merges the filters of all its clients.
///
/// Every discovery asks for a *filtered* discovery in BlueZ's sense, with an RSSI floor
/// (``rssiMin``, or ``lowestRSSIFloor`` when none is given): bluetoothd reports a device
/// that does not advertise as discoverable (no LE General or Limited Discoverable flag, as
/// most beacons and many sensors) only to a filtered discovery (src/adapter.c,
/// device_is_discoverable; main.conf `FilterDiscoverable`, 5.84 and later, can turn that
/// off), and from BlueZ 5.67 on a filter with only Transport, the adapter's scan type ("le"
/// on an LE-only adapter), and DuplicateData false counts as unfiltered
/// (merge_discovery_filters).
public struct DiscoveryFilter: Sendable, Equatable {
    /// Service UUIDs; a device matches when its Device1.UUIDs (``Advertisement/uuids``: the
    /// UUIDs it advertises, plus the services BlueZ found on an earlier connection) has any of
    /// them. Empty: any device. Client-side only: bluetoothd 5.87 crashes (SIGSEGV) when a
    /// discovery filter with `UUIDs` meets an advertisement that lists service UUIDs
    /// (src/adapter.c, is_filter_match; fixed after 5.87), and it does not reliably tell its
    /// version on the bus (Adapter1.Modalias carries main.conf's DeviceID), so `UUIDs` is
    /// never sent.
    public var uuids: [BluetoothUUID]
    /// Minimum RSSI in dBm; nil: no floor (``lowestRSSIFloor`` is sent to BlueZ then).
    public var rssiMin: Int16?
    /// Case-insensitive substrings of the name; a device matches when its Name
    /// (``Advertisement/name``) or its Alias (``Advertisement/alias``: the name its user gave
    /// it, which bluetoothctl and desktops show) contains any. Client-side only.
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

    /// The RSSI floor sent when none is asked for: -127 dBm, the lowest SetDiscoveryFilter
    /// takes (Core specification 4.2, Vol 2 Part E 7.7.65.2). It makes the discovery a
    /// filtered one and lets through every advertisement that reports an RSSI (the kernel
    /// drops one whose RSSI is 127, "not available", once a floor is set); bluetoothd merges
    /// the clients' floors by taking the lowest, and none when a client has none, so it never
    /// narrows another client's discovery. During a filtered discovery bluetoothd signals
    /// every change of a device's RSSI, not only moves of 8 dBm.
    public static let lowestRSSIFloor: Int16 = -127

    /// What is asked of bluetoothd for this filter: Transport "le", DuplicateData explicit,
    /// RSSI (``rssiMin`` or ``lowestRSSIFloor``). Never `UUIDs` (see ``uuids``) nor `Pattern`
    /// (see ``addresses``).
    var sent: Sent { Sent(rssi: rssiMin ?? Self.lowestRSSIFloor, duplicateData: duplicateData) }

    /// The SetDiscoveryFilter argument (`a{sv}`) for this filter alone.
    var dbusValue: DBusValue { sent.dbusValue }

    /// The SetDiscoveryFilter argument of one discovery (of every user of a session's
    /// discovery on one adapter, merged).
    struct Sent: Sendable, Equatable {
        var rssi: Int16
        var duplicateData: Bool

        /// The filter that asks for everything either asks for, merged as bluetoothd merges
        /// its clients' filters (bluez/src/adapter.c merge_discovery_filters): the lowest
        /// RSSI floor, DuplicateData when either wants it (the transport is always "le").
        func merged(with other: Sent) -> Sent {
            Sent(rssi: min(rssi, other.rssi), duplicateData: duplicateData || other.duplicateData)
        }

        /// The SetDiscoveryFilter argument (`a{sv}`).
        var dbusValue: DBusValue {
            .stringVariantDictionary([
                "Transport": .string("le"),
                "DuplicateData": .boolean(duplicateData),
                "RSSI": .int16(rssi),
            ])
        }
    }

    /// Whether a device passes every kind of filter given.
    public func matches(_ advertisement: Advertisement) -> Bool {
        if !addresses.isEmpty, !addresses.contains(advertisement.address) { return false }
        if !uuids.isEmpty, !advertisement.uuids.contains(where: uuids.contains) { return false }
        if let rssiMin {
            guard let rssi = advertisement.rssi, rssi >= Int(rssiMin) else { return false }
        }
        if !names.isEmpty {
            let known = [advertisement.name, advertisement.alias].compactMap { $0?.lowercased() }
            guard names.contains(where: { wanted in known.contains { $0.contains(wanted.lowercased()) } }) else { return false }
        }
        return true
    }
}
