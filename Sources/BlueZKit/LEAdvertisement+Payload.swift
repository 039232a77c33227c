/// What a legacy (Bluetooth 4.x) advertisement puts on air, as bluetoothd 5.66 and Linux lay
/// it out: src/advertising.c (get_adv_flags, generate_adv_data, generate_scan_rsp),
/// src/shared/ad.c (bt_ad_generate's order) and the kernel's share (net/bluetooth/eir.c,
/// mgmt.c tlv_data_max_len: the Flags and TX Power fields it adds).
extension LEAdvertisement {
    /// The most a legacy advertising packet or scan response holds, in bytes (Core Vol 3,
    /// Part C, 11; BlueZ's BT_AD_MAX_DATA_LEN).
    public static let legacyMaximum = 31

    /// The most bytes of ``localName`` that fit a scan response whole (31 less the field's
    /// length and type bytes).
    public static let longestLocalName = legacyMaximum - 2

    /// Which packet a field goes in.
    public enum Packet: String, Sendable {
        case advertisingData = "advertising data"
        case scanResponse = "scan response"
    }

    /// One AD structure of the payload: its length byte, type byte and data.
    public struct Field: Sendable, Equatable, CustomStringConvertible {
        /// The LEAdvertisement1 property it comes from (`ServiceUUIDs`, `ManufacturerData`,
        /// `Includes`, ...), or `Flags` for the Flags field the kernel or `Discoverable` adds.
        public var property: String
        /// Which entry of the property, when it has several (`0x004c`, a UUID); nil for none.
        public var entry: String?
        /// The AD type (0x01 Flags, 0x03 16-bit UUIDs, 0xFF manufacturer data, ...).
        public var adType: UInt8
        /// Bytes it takes, length and type bytes included.
        public var size: Int
        public var packet: Packet

        /// `ManufacturerData 0x004c`, `ServiceUUIDs`.
        public var description: String { entry.map { "\(property) \($0)" } ?? property }
    }

    /// The two packets of a legacy advertisement, field by field.
    public struct LegacyPayload: Sendable, Equatable {
        /// Every field in on-air order, advertising data first.
        public var fields: [Field]

        /// Bytes of the advertising data, 0 to ``LEAdvertisement/legacyMaximum``.
        public var advertisingDataSize: Int { size(of: .advertisingData) }
        /// Bytes of the scan response, 0 to ``LEAdvertisement/legacyMaximum``.
        public var scanResponseSize: Int { size(of: .scanResponse) }

        func size(of packet: Packet) -> Int { fields.filter { $0.packet == packet }.reduce(0) { $0 + $1.size } }
    }

    /// Why an advertisement is refused before anything is sent to bluetoothd, naming the
    /// property (and entry) at fault.
    public struct Rejection: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: Sendable, Equatable {
            /// The field does not fit the packet's 31 bytes with those before it.
            case doesNotFit
            /// A value or a combination bluetoothd 5.66 refuses ("Failed to parse advertisement.").
            case invalid
            /// The adapter has no free advertising instance (LEAdvertisingManager1.SupportedInstances 0).
            case noFreeInstance
        }

        public var kind: Kind
        /// The LEAdvertisement1 property at fault, or `SupportedInstances` (the adapter's).
        public var property: String
        /// The entry of the property at fault (`0x004c`, a UUID), nil for the whole property.
        public var entry: String?
        /// What is wrong, in a sentence fragment: "needs 12 bytes; the advertising data would
        /// take 38 of 31".
        public var reason: String

        public init(_ kind: Kind, property: String, entry: String? = nil, reason: String) {
            self.kind = kind
            self.property = property
            self.entry = entry
            self.reason = reason
        }

        public var description: String {
            let field = entry.map { "\(property) \($0)" } ?? property
            return switch kind {
            case .doesNotFit: "\(field) does not fit: \(reason)"
            case .invalid: "\(field) refused: \(reason)"
            case .noFreeInstance: "no advertising instance free: \(reason)"
            }
        }
    }

    /// The packets bluetoothd 5.66 and the kernel would make of this advertisement, checked
    /// before anything is sent.
    ///
    /// Advertising data, in this order: the kernel's Flags (3 bytes) for a peripheral while
    /// the adapter is discoverable and ``discoverable`` is not true; ``serviceUUIDs`` (2 + 2
    /// per 16-bit UUID, 2 + 16 per 128-bit one, one field per size); each ``manufacturerData``
    /// (4 + its data); each ``serviceData`` (2 + 2 or 16 for the UUID + its data); Appearance
    /// (4) with ``appearance`` or ``Include/appearance``; the Flags of ``discoverable`` true
    /// (3); TX Power (3) with ``Include/txPower``. Scan response: ``localName`` (2 + its
    /// UTF-8 bytes), or with ``Include/localName`` the adapter's name, shortened to fit. An
    /// LE-only adapter (which D-Bus does not show) gets the kernel's Flags always, beyond
    /// what is counted here, as bluetoothd 5.66 does not count them either.
    /// - Parameters:
    ///   - adapterDiscoverable: Adapter1.Discoverable.
    ///   - adapterName: Adapter1.Alias, for ``Include/localName``; nil: counted as empty.
    /// - Returns: the fields, each at most 31 bytes per packet in all.
    /// - Throws: ``BLEError/advertisementRejected(_:)`` with ``Rejection/Kind/doesNotFit``
    ///   naming the first field past 31 bytes (or a ``localName`` over
    ///   ``longestLocalName`` bytes, which bluetoothd would shorten), or
    ///   ``Rejection/Kind/invalid`` for what bluetoothd 5.66 refuses to parse: an empty
    ///   manufacturer or service data value, a company or service UUID given twice,
    ///   ``localName`` with ``Include/localName`` or with a NUL character, ``appearance`` with
    ///   ``Include/appearance``, ``discoverable`` true on a ``Kind/broadcast`` advertisement.
    public func legacyPayload(adapterDiscoverable: Bool, adapterName: String? = nil) throws(BLEError) -> LegacyPayload {
        try checkValues()
        var fields: [Field] = []
        func add(_ property: String, _ entry: String? = nil, adType: UInt8, data: Int, in packet: Packet = .advertisingData) {
            fields.append(Field(property: property, entry: entry, adType: adType, size: 2 + data, packet: packet))
        }
        if type == .peripheral && adapterDiscoverable && discoverable != true { add("Flags", adType: 0x01, data: 1) }
        let short = serviceUUIDs.filter { $0.uuid16 != nil }, long = serviceUUIDs.filter { $0.uuid16 == nil }
        if !short.isEmpty { add("ServiceUUIDs", "16-bit", adType: 0x03, data: 2 * short.count) }
        if !long.isEmpty { add("ServiceUUIDs", "128-bit", adType: 0x07, data: 16 * long.count) }
        for entry in manufacturerData { add("ManufacturerData", Self.companyText(entry.company), adType: 0xFF, data: 2 + entry.data.count) }
        for entry in serviceData {
            let short = entry.uuid.uuid16 != nil
            add("ServiceData", entry.uuid.shortString, adType: short ? 0x16 : 0x21, data: (short ? 2 : 16) + entry.data.count)
        }
        if appearance != nil { add("Appearance", adType: 0x19, data: 2) }
        if includes.contains(.appearance) { add("Includes", Include.appearance.rawValue, adType: 0x19, data: 2) }
        if discoverable == true { add("Discoverable", adType: 0x01, data: 1) }
        if includes.contains(.txPower) { add("Includes", Include.txPower.rawValue, adType: 0x0A, data: 1) }
        if let localName { add("LocalName", adType: 0x09, data: localName.utf8.count, in: .scanResponse) }
        if includes.contains(.localName) {
            let length = min(adapterName?.utf8.count ?? 0, Self.longestLocalName)
            add("Includes", Include.localName.rawValue, adType: length < (adapterName?.utf8.count ?? 0) ? 0x08 : 0x09, data: length,
                in: .scanResponse)
        }
        try Self.checkFit(fields)
        return LegacyPayload(fields: fields)
    }

    /// The first field that takes a packet past 31 bytes, refused.
    private static func checkFit(_ fields: [Field]) throws(BLEError) {
        for packet in [Packet.advertisingData, .scanResponse] {
            var total = 0
            let inPacket = fields.filter { $0.packet == packet }
            for field in inPacket {
                total += field.size
                guard total > legacyMaximum else { continue }
                let whole = inPacket.reduce(0) { $0 + $1.size }
                throw BLEError.advertisementRejected(Rejection(
                    .doesNotFit, property: field.property, entry: field.entry,
                    reason: "it takes \(field.size) bytes, and the \(packet.rawValue) would take \(whole) of \(legacyMaximum)"))
            }
        }
    }

    /// What bluetoothd 5.66 refuses to parse, and a name it would shorten.
    private func checkValues() throws(BLEError) {
        func refuse(_ property: String, entry: String? = nil, _ reason: String, kind: Rejection.Kind = .invalid) -> BLEError {
            .advertisementRejected(Rejection(kind, property: property, entry: entry, reason: reason))
        }
        if type == .broadcast && discoverable == true {
            throw refuse("Discoverable", "a broadcast advertisement cannot carry Flags (use a peripheral one)")
        }
        if localName != nil && includes.contains(.localName) { throw refuse("LocalName", "not with the local-name include") }
        // A D-Bus string cannot carry NUL: the object could not be read back, and bluetoothd
        // would register an empty advertisement in its place.
        if localName?.utf8.contains(0) == true { throw refuse("LocalName", "a NUL character (D-Bus strings cannot carry one)") }
        if appearance != nil && includes.contains(.appearance) { throw refuse("Appearance", "not with the appearance include") }
        var companies = Set<UInt16>()
        for entry in manufacturerData {
            let company = Self.companyText(entry.company)
            if entry.data.isEmpty { throw refuse("ManufacturerData", entry: company, "empty data") }
            if !companies.insert(entry.company).inserted { throw refuse("ManufacturerData", entry: company, "given twice") }
        }
        var uuids = Set<BluetoothUUID>()
        for entry in serviceData {
            if entry.data.isEmpty { throw refuse("ServiceData", entry: entry.uuid.shortString, "empty data") }
            if !uuids.insert(entry.uuid).inserted { throw refuse("ServiceData", entry: entry.uuid.shortString, "given twice") }
        }
        if let localName, localName.utf8.count > Self.longestLocalName {
            throw refuse("LocalName", "it takes \(localName.utf8.count + 2) bytes, and the scan response holds \(Self.legacyMaximum) "
                            + "(at most \(Self.longestLocalName) bytes of UTF-8; bluetoothd would shorten it)", kind: .doesNotFit)
        }
    }

    /// `0x004c`: a company identifier as BlueZ's tools print it.
    static func companyText(_ company: UInt16) -> String {
        let hex = String(company, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
