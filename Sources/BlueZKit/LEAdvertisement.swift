import DBusKit

/// An advertisement of this host's own, as an org.bluez.LEAdvertisement1 object describes it
/// to bluetoothd (bluez 5.66 doc/advertising-api.txt, later doc/org.bluez.LEAdvertisement.rst):
/// what goes into the LE advertising data and scan response. Register it with
/// ``Adapter/withAdvertisement(_:path:timeout:isolation:_:)``.
///
/// Not to be confused with ``Advertisement``, what a *remote* device advertised as a scan
/// sees it. A property left at its default is not exported at all, as BlueZ reads an absent
/// property: not included in the data.
public struct LEAdvertisement: Sendable, Equatable {
    /// `Type`: the kind of advertising packet.
    public enum Kind: String, Sendable, CaseIterable {
        /// Non-connectable (ADV_NONCONN_IND/ADV_SCAN_IND): nobody can connect; cannot carry
        /// Flags, so cannot be discoverable.
        case broadcast
        /// Connectable (ADV_IND): a central may connect to this host.
        case peripheral
    }

    /// One `Includes` entry: a field bluetoothd or the kernel adds itself
    /// (LEAdvertisingManager1.SupportedIncludes).
    public enum Include: String, Sendable, CaseIterable, Comparable {
        /// The controller's advertising TX power (AD type 0x0A, 3 bytes), added by the kernel.
        case txPower = "tx-power"
        /// The Appearance field (AD type 0x19, 4 bytes); bluetoothd 5.66 puts 0x0000 there
        /// (its "TODO: Get the correct Appearance"). Not with ``LEAdvertisement/appearance``.
        case appearance
        /// The adapter's name in the scan response. Not with ``LEAdvertisement/localName``.
        case localName = "local-name"

        public static func < (lhs: Include, rhs: Include) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// One `ManufacturerData` entry: a company identifier (Bluetooth SIG assigned number) and
    /// its data, AD type 0xFF.
    public struct ManufacturerData: Sendable, Hashable {
        public var company: UInt16
        /// At least one byte (bluetoothd 5.66 refuses an empty value).
        public var data: [UInt8]

        public init(company: UInt16, data: [UInt8]) {
            self.company = company
            self.data = data
        }
    }

    /// One `ServiceData` entry: a service UUID and its data, AD type 0x16 (16-bit UUID) or
    /// 0x21 (128-bit).
    public struct ServiceData: Sendable, Hashable {
        public var uuid: BluetoothUUID
        /// At least one byte (bluetoothd 5.66 refuses an empty value).
        public var data: [UInt8]

        public init(uuid: BluetoothUUID, data: [UInt8]) {
            self.uuid = uuid
            self.data = data
        }
    }

    /// `Type`; default ``Kind/peripheral``.
    public var type: Kind
    /// `LocalName`: the name in the scan response (Complete Local Name, AD type 0x09); nil:
    /// none. bluetoothd shortens a name over 29 bytes of UTF-8; ``legacyPayload(adapterDiscoverable:)``
    /// refuses it instead.
    public var localName: String?
    /// `ServiceUUIDs`, in order: 16-bit UUIDs on the Base UUID take 2 bytes each, others 16.
    public var serviceUUIDs: [BluetoothUUID]
    /// `ManufacturerData`, in the order they go on air; one entry per company.
    public var manufacturerData: [ManufacturerData]
    /// `ServiceData`, in the order they go on air; one entry per UUID.
    public var serviceData: [ServiceData]
    /// `Includes`.
    public var includes: Set<Include>
    /// `Appearance` (Bluetooth SIG Assigned Numbers, "Appearance Values"); nil: none.
    public var appearance: UInt16?
    /// `Discoverable`: true puts the Flags field (LE General Discoverable) in the data
    /// whatever the adapter's own Discoverable; only for ``Kind/peripheral``. nil: not
    /// exported (bluetoothd then adds the Flags only while the adapter is discoverable).
    public var discoverable: Bool?
    /// `Timeout`, in seconds: bluetoothd drops the advertisement (and calls Release) that
    /// long after registering it. nil: none (until unregistered).
    public var timeout: UInt16?
    /// `Duration`, in seconds: how long this advertisement is on air in turn when several
    /// share the controller (bluetoothd's default, 2). nil: not exported.
    public var duration: UInt16?

    /// An advertisement with the given properties; every one defaults to "not exported".
    public init(type: Kind = .peripheral, localName: String? = nil, serviceUUIDs: [BluetoothUUID] = [],
                manufacturerData: [ManufacturerData] = [], serviceData: [ServiceData] = [], includes: Set<Include> = [],
                appearance: UInt16? = nil, discoverable: Bool? = nil, timeout: UInt16? = nil, duration: UInt16? = nil) {
        self.type = type
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.includes = includes
        self.appearance = appearance
        self.discoverable = discoverable
        self.timeout = timeout
        self.duration = duration
    }

    /// The org.bluez.LEAdvertisement1 properties as exported (GetAll, GetManagedObjects):
    /// only those set, each with the D-Bus type the BlueZ doc gives it (`Type` s,
    /// `ServiceUUIDs` as, `ManufacturerData` a{qv} of ay, `ServiceData` a{sv} of ay,
    /// `Includes` as, `LocalName` s, `Appearance` q, `Discoverable` b, `Timeout` q,
    /// `Duration` q). UUIDs go in their 128-bit form, which bluetoothd shortens to 16 bits
    /// when they are on the Base UUID.
    public var properties: [(name: String, value: DBusValue)] {
        var out: [(String, DBusValue)] = [("Type", .string(type.rawValue))]
        if !serviceUUIDs.isEmpty { out.append(("ServiceUUIDs", .stringArray(serviceUUIDs.map(\.description)))) }
        if !manufacturerData.isEmpty {
            out.append(("ManufacturerData", .dictionary(keySignature: "q", valueSignature: "v", manufacturerData.map {
                DBusValue.DictEntry(.uint16($0.company), .variant(.bytes($0.data)))
            })))
        }
        if !serviceData.isEmpty {
            out.append(("ServiceData", .dictionary(keySignature: "s", valueSignature: "v", serviceData.map {
                DBusValue.DictEntry(.string($0.uuid.description), .variant(.bytes($0.data)))
            })))
        }
        if !includes.isEmpty { out.append(("Includes", .stringArray(includes.sorted().map(\.rawValue)))) }
        if let localName { out.append(("LocalName", .string(localName))) }
        if let appearance { out.append(("Appearance", .uint16(appearance))) }
        if let discoverable { out.append(("Discoverable", .boolean(discoverable))) }
        if let timeout { out.append(("Timeout", .uint16(timeout))) }
        if let duration { out.append(("Duration", .uint16(duration))) }
        return out
    }

    /// ``properties`` as the a{sv} of Properties.GetAll.
    var propertiesDictionary: DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v", properties.map { DBusValue.DictEntry(.string($0.name), .variant($0.value)) })
    }
}
