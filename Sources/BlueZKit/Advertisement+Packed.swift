import DBusKit

// An Advertisement read straight from the object cache's packed Device1 record, with no
// `DBusValue` and no dictionary made on the way (issue 12: a discovery makes one per
// sighting; through the decoded dictionary it cost some 25,000 instructions each).

extension Advertisement {
    /// The record of the Device1 properties in `packed`, stamped with the current wall-clock
    /// time; nil when the address is missing or malformed. Reads exactly what
    /// ``init(path:properties:)`` reads from the same properties decoded.
    init?(path: ObjectPath, packed: PackedProperties) {
        var addressText: String?
        var addressType: String?
        var rawName: String?
        var rssi: Int?
        var txPower: Int?
        var appearance: Int?
        var uuids: [BluetoothUUID] = []
        var manufacturer = [UInt16: [UInt8]]()
        var service = [BluetoothUUID: [UInt8]]()
        var connected = false
        // The indices read once (a `static let` is a lazy global: every read of one in the
        // switch below went through `swift_once`, seven times per entry).
        let known = Self.known
        packed.forEachKnownEntry { index, reader in
            switch index {
            case known.address: addressText = reader.stringValue()
            case known.addressType: addressType = reader.stringValue()
            case known.name: rawName = reader.stringValue()
            case known.rssi: rssi = reader.integerValue()
            case known.txPower: txPower = reader.integerValue()
            case known.appearance: appearance = reader.integerValue()
            case known.connected: connected = reader.boolValue() ?? false
            case known.uuids: uuids = (reader.stringArrayValue() ?? []).compactMap { BluetoothUUID($0) }
            case known.manufacturerData:
                manufacturer = [:]
                reader.forEachDictionaryEntry { key, value in
                    guard let id = key.integerValue(), let company = UInt16(exactly: id), let data = value.bytesValue() else { return }
                    manufacturer[company] = data
                }
            case known.serviceData:
                service = [:]
                reader.forEachDictionaryEntry { key, value in
                    guard let uuid = key.stringValue().flatMap({ BluetoothUUID($0) }), let data = value.bytesValue() else { return }
                    service[uuid] = data
                }
            default: break
            }
        }
        guard let address = addressText.flatMap({ BluetoothAddress($0) }) ?? BluetoothAddress(devicePath: path.rawValue) else { return nil }
        self.address = address
        objectPath = path
        self.addressType = addressType
        name = address.realName(rawName)
        self.rssi = rssi
        self.txPower = txPower
        self.appearance = appearance.flatMap { UInt16(exactly: $0) }
        self.uuids = uuids
        manufacturerData = manufacturer
        serviceData = service
        self.connected = connected
        receivedAt = wallClockNow()
    }

    /// This record with a Device1 PropertiesChanged applied (`changed`, packed as received;
    /// nothing invalidated) that changes none of the properties read here but RSSI and
    /// TxPower, stamped with the current wall-clock time: exactly what ``init(path:packed:)``
    /// would read from the cache after that change, when this record was read from the cache
    /// just before it. Nil when `changed` holds another property read here (Address,
    /// AddressType, Name, Appearance, Connected, UUIDs, ManufacturerData, ServiceData): then
    /// read the cache. A scan with DuplicateData reports RSSI changes thousands of times a
    /// second (issue 12).
    /// Nil too when `changed` keeps a value unpacked (a file descriptor, which no BlueZ
    /// property is): that value may be one read here.
    func updated(withChanged changed: PackedProperties) -> Advertisement? {
        guard !changed.hasUnpackedValues else { return nil }
        var updated = self
        var applicable = true
        let known = Self.known
        changed.forEachKnownEntry { index, reader in
            switch index {
            case known.rssi: updated.rssi = reader.integerValue()
            case known.txPower: updated.txPower = reader.integerValue()
            case known.address, known.addressType, known.name, known.appearance, known.connected,
                 known.uuids, known.manufacturerData, known.serviceData:
                applicable = false
            default: break
            }
        }
        guard applicable else { return nil }
        updated.receivedAt = wallClockNow()
        return updated
    }

    /// The indices in ``PackedProperties/knownNames`` of the Device1 properties read here.
    private struct KnownIndices {
        let address = index("Address"), addressType = index("AddressType"), name = index("Name")
        let rssi = index("RSSI"), txPower = index("TxPower"), appearance = index("Appearance")
        let uuids = index("UUIDs"), manufacturerData = index("ManufacturerData")
        let serviceData = index("ServiceData"), connected = index("Connected")

        private static func index(_ name: String) -> UInt8 {
            UInt8(PackedProperties.knownNames.firstIndex(of: name)!)
        }
    }
    private static let known = KnownIndices()
}

/// Typed reads of one packed value, with ``DBusValue``'s typed accessors' rules: variants
/// are looked through, and a value of another type reads as nil (and is skipped).
extension PackedReader {
    private static let variant = UInt8(ascii: "v")

    /// Past any variant wrappers: the inner value's type code, not consumed; nil at the end.
    private mutating func unwrappedCode() -> UInt8? {
        while offset < buffer.count, buffer[offset] == Self.variant { offset += 1 }
        return offset < buffer.count ? buffer[offset] : nil
    }

    /// `s` (``DBusValue/string``).
    mutating func stringValue() -> String? {
        guard unwrappedCode() == UInt8(ascii: "s") else { skipValue(); return nil }
        offset += 1
        return readString()
    }

    /// `b` (``DBusValue/bool``).
    mutating func boolValue() -> Bool? {
        guard unwrappedCode() == UInt8(ascii: "b") else { skipValue(); return nil }
        offset += 1
        return byte() != 0
    }

    /// Any integer type that fits in an `Int` (``DBusValue/integer``).
    mutating func integerValue() -> Int? {
        guard let code = unwrappedCode() else { return nil }
        offset += 1
        switch code {
        case UInt8(ascii: "y"): return Int(byte())
        case UInt8(ascii: "n"): return Int(readFixed(Int16.self))
        case UInt8(ascii: "q"): return Int(readFixed(UInt16.self))
        case UInt8(ascii: "i"): return Int(readFixed(Int32.self))
        case UInt8(ascii: "u"): return Int(readFixed(UInt32.self))
        case UInt8(ascii: "x"): return Int(readFixed(Int64.self))
        case UInt8(ascii: "t"):
            let v = readFixed(UInt64.self)
            return v <= UInt64(Int.max) ? Int(v) : nil
        default:
            offset -= 1
            skipValue()
            return nil
        }
    }

    /// `ay`, or an array of `y` values (``DBusValue/bytes``).
    mutating func bytesValue() -> [UInt8]? {
        let start = offset
        if unwrappedCode() == UInt8(ascii: "A") {
            offset += 1
            let count = min(readLength(), buffer.count - offset)
            defer { offset += count }
            return Array(buffer[offset..<offset + count])
        }
        offset = start
        return homogeneousArray(of: UInt8(ascii: "y"), signatureMustMatch: true) { $0.byte() }
    }

    /// `as`, each element a string (``DBusValue/stringArray``).
    mutating func stringArrayValue() -> [String]? {
        homogeneousArray(of: UInt8(ascii: "s")) { $0.readString() }
    }

    /// The elements of an array whose every element has the type code `code`, each read by
    /// `element` (placed just after the element's code); nil, and the value skipped, for
    /// anything else (another type, or an element of another type: no variant is looked
    /// through inside, as ``DBusValue``'s accessors do not). With `signatureMustMatch`, the
    /// array's element signature must also be that one code (``DBusValue/bytes`` takes
    /// `.array("y", …)` only, even when empty).
    private mutating func homogeneousArray<T>(of code: UInt8, signatureMustMatch: Bool = false,
                                              _ element: (inout PackedReader) -> T) -> [T]? {
        let start = offset
        guard unwrappedCode() == UInt8(ascii: "a") else { skipValue(); return nil }
        offset += 1
        let signatureLength = readLength()
        let signatureStart = offset
        offset = min(buffer.count, offset + signatureLength)
        if signatureMustMatch, signatureLength != 1 || signatureStart >= buffer.count || buffer[signatureStart] != code {
            offset = start
            skipValue()
            return nil
        }
        let count = readLength()
        var out = [T]()
        out.reserveCapacity(min(count, buffer.count - offset))
        for _ in 0..<count {
            guard offset < buffer.count, buffer[offset] == code else {
                offset = start
                skipValue()
                return nil
            }
            offset += 1
            out.append(element(&self))
        }
        return out
    }

    /// Calls `body` with readers at each entry's key and value of a dictionary
    /// (``DBusValue/dictionaryEntries``); nothing for a value of another type. `body` may
    /// read or leave either.
    mutating func forEachDictionaryEntry(_ body: (inout PackedReader, inout PackedReader) -> Void) {
        guard unwrappedCode() == UInt8(ascii: "e") else { skipValue(); return }
        offset += 1
        skipString()
        skipString()
        let count = readLength()
        for _ in 0..<count where offset < buffer.count {
            var key = self
            let keyStart = offset
            skipValue()
            var value = self
            let valueStart = offset
            skipValue()
            let end = offset
            key.offset = keyStart
            value.offset = valueStart
            body(&key, &value)
            offset = end
        }
    }
}
