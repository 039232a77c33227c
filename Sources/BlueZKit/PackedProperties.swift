import DBusKit

/// One object's properties on one interface, packed into a single byte buffer: the compact
/// record the object cache keeps per object and interface (a scan tracks tens of thousands
/// of devices).
///
/// A dictionary of ``DBusValue``s costs a hash table plus a heap box per variant and one per
/// string longer than 15 bytes: about 2.5 KB for the 20 properties bluetoothd sends per
/// device. Packed, the same properties take one allocation of a few
/// hundred bytes. Any value round-trips exactly (types, signatures of empty containers,
/// entry order), so readers see the same ``DBusValue``s the signals carried; the one kind
/// that cannot be packed, a Unix file descriptor (which BlueZ's properties never are), stays
/// decoded beside the buffer. Received properties are packed straight from the signal's wire
/// form (PackedProperties+Wire.swift), others from their decoded values. What it saves
/// against the plain alternative (a `[String: DBusValue]` per object and interface, read from
/// the decoded `Message.body`), in CPU per device and peak RSS: BENCHMARKS.md.
///
/// Layout: entries one after another, each a key then a value. A key is one byte, the index
/// of a name in ``knownNames``, or `0xFF`, a length and the name's UTF-8. A value is a type
/// code (the D-Bus one; `A` for `ay`, `e` for a dictionary, `r` for a structure) and its
/// payload: fixed-size numbers little-endian, strings as a length and UTF-8, containers as
/// their element signatures, a count and their elements. Lengths and counts are LEB128.
struct PackedProperties: Sendable, Equatable {
    private(set) var bytes: [UInt8] = []
    /// Values that cannot be packed (file descriptors), by name.
    private var unpacked: [String: DBusValue] = [:]

    /// Property names stored as one byte each (fewer than 64: ``knownMask(_:)`` gives each a
    /// bit): Device1's (bluez/doc/org.bluez.Device.rst), then those of GattService1,
    /// GattCharacteristic1, GattDescriptor1 and Battery1 that Device1 does not have (their
    /// bluez/doc files). A notification's `Value` is then read and written with no String
    /// made for its name.
    static let knownNames: [String] = [
        "Address", "AddressType", "Name", "Icon", "Class", "Appearance", "UUIDs", "Paired",
        "Bonded", "Connected", "Trusted", "Blocked", "WakeAllowed", "Alias", "Adapter",
        "LegacyPairing", "CablePairing", "Modalias", "RSSI", "TxPower", "ManufacturerData",
        "ServiceData", "ServicesResolved", "AdvertisingFlags", "AdvertisingData", "Sets",
        "PreferredBearer",
        "UUID", "Device", "Primary", "Includes", "Handle",
        "Service", "Value", "Notifying", "Flags", "WriteAcquired", "NotifyAcquired", "MTU",
        "Characteristic",
        "Percentage", "Source",
    ]
    private static let knownIndex: [String: UInt8] = Dictionary(
        uniqueKeysWithValues: knownNames.enumerated().map { ($0.element, UInt8($0.offset)) })
    private static let otherName: UInt8 = 0xFF

    init() {}

    /// Packs `properties` (values as they are: variants are kept as variants).
    init(_ properties: [String: DBusValue]) {
        merge(properties, invalidated: [])
    }

    var isEmpty: Bool { bytes.isEmpty && unpacked.isEmpty }

    /// Whether some values are kept decoded beside the bytes (they cannot be packed).
    var hasUnpackedValues: Bool { !unpacked.isEmpty }

    /// The value of `name`, nil when absent.
    func value(of name: String) -> DBusValue? {
        if !unpacked.isEmpty, let value = unpacked[name] { return value }
        var found: DBusValue?
        forEachEntry { key, reader in
            guard key == name else { return true }
            found = reader.readValue()
            return false
        }
        return found
    }

    /// Every property, decoded.
    var dictionary: [String: DBusValue] {
        var out = unpacked
        out.reserveCapacity(unpacked.count + 24)
        forEachEntry { key, reader in
            if let value = reader.readValue() { out[key] = value }
            return true
        }
        return out
    }

    /// How many properties there are (no name or value decoded).
    var count: Int {
        var n = unpacked.count
        bytes.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            while reader.offset < buffer.count {
                if reader.byte() == Self.otherName { reader.skipString() }
                reader.skipValue()
                n += 1
            }
        }
        return n
    }

    /// Every property, decoded, in the record's order (then those kept decoded).
    var entries: [(key: String, value: DBusValue)] {
        var out = [(key: String, value: DBusValue)]()
        forEachEntry { key, reader in
            if let value = reader.readValue() { out.append((key, value)) }
            return true
        }
        out.append(contentsOf: unpacked.map { (key: $0.key, value: $0.value) })
        return out
    }

    /// The names of the properties, in the record's order (then those kept decoded).
    var keys: [String] {
        var out = [String]()
        forEachEntry { key, _ in
            out.append(key)
            return true
        }
        out.append(contentsOf: unpacked.keys)
        return out
    }

    /// `changed` (packed too) replaces (or adds) those properties; `invalidated` ones are
    /// dropped (applied after `changed`, as PropertiesChanged is folded). Entries are copied
    /// byte for byte: nothing is decoded. A record that was empty takes `changed`'s storage.
    mutating func merge(_ changed: PackedProperties, invalidated: [String]) {
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        if isEmpty, invalidated.isEmpty {
            self = changed
            return
        }
        // One value replaced by one of the same encoded size (an RSSI, a flag): in place, with
        // no new buffer (`scan --updates` folds one per advertisement).
        if invalidated.isEmpty, changed.unpacked.isEmpty, replaceInPlace(with: changed.bytes) { return }
        var dropped = KeyTokens(changed.keyTokens)
        dropped.insert(contentsOf: changed.unpacked.keys.map(KeyToken.init))
        let invalidatedTokens = KeyTokens(invalidated.map(KeyToken.init))
        dropped.insert(contentsOf: invalidatedTokens.all)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + changed.bytes.count)
        Self.appendEntries(of: bytes, to: &out, except: dropped)
        if invalidated.isEmpty {
            out.append(contentsOf: changed.bytes)
        } else {
            Self.appendEntries(of: changed.bytes, to: &out, except: invalidatedTokens)
        }
        bytes = out
        if !unpacked.isEmpty || !changed.unpacked.isEmpty {
            for key in changed.keys { unpacked[key] = nil }
            for (key, value) in changed.unpacked { unpacked[key] = value }
            for key in invalidated { unpacked[key] = nil }
        }
    }

    /// When `entry` is exactly one entry whose name this record has, with a value of the same
    /// encoded size: overwrites that entry's bytes and returns true; else changes nothing.
    private mutating func replaceInPlace(with entry: [UInt8]) -> Bool {
        let target: (token: KeyToken, range: Range<Int>)? = entry.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            let token = reader.readKeyToken()
            reader.skipValue()
            return reader.offset == buffer.count ? (token, 0..<buffer.count) : nil
        }
        guard let target else { return false }
        let found: Range<Int>? = bytes.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            while reader.offset < buffer.count {
                let start = reader.offset
                let token = reader.readKeyToken()
                reader.skipValue()
                if token == target.token { return start..<reader.offset }
            }
            return nil
        }
        guard let found, found.count == target.range.count else { return false }
        bytes.replaceSubrange(found, with: entry)
        return true
    }

    /// Whether the record holds exactly one property, `name` (read from its first key only).
    func hasOnly(_ name: String) -> Bool {
        guard unpacked.isEmpty, !bytes.isEmpty else { return false }
        return bytes.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            guard reader.readKey() == name else { return false }
            reader.skipValue()
            return reader.offset == buffer.count
        }
    }

    /// Whether the record has a property whose index in ``knownNames`` is set in `mask`
    /// (bit `1 << index`; see ``knownMask(_:)``), without decoding any name.
    func hasAnyKnown(_ mask: UInt64) -> Bool {
        var found = false
        forEachKnownEntry { index, _ in
            if mask & (1 << UInt64(index)) != 0 { found = true }
        }
        return found
    }

    /// The bits ``hasAnyKnown(_:)`` takes for `names` (names that are not known have none).
    static func knownMask(_ names: some Sequence<String>) -> UInt64 {
        names.reduce(0) { mask, name in index(of: name).map { mask | 1 << UInt64($0) } ?? mask }
    }

    /// Names to leave out of a merge: the known ones as bits, the others in a set (a change
    /// may name tens of thousands; looked up once per entry kept).
    fileprivate struct KeyTokens {
        private(set) var all: [KeyToken] = []
        private var known: UInt64 = 0
        private var others = Set<String>()

        init(_ tokens: [KeyToken]) { insert(contentsOf: tokens) }

        mutating func insert(contentsOf tokens: [KeyToken]) {
            for token in tokens {
                all.append(token)
                switch token {
                case .known(let index): known |= 1 << UInt64(index & 63)
                case .other(let name): others.insert(name)
                }
            }
        }

        func contains(_ token: KeyToken) -> Bool {
            switch token {
            case .known(let index): known & (1 << UInt64(index & 63)) != 0
            case .other(let name): !others.isEmpty && others.contains(name)
            }
        }
    }

    /// A property name as the record holds it: its index in ``knownNames``, or the name.
    enum KeyToken: Equatable {
        case known(UInt8)
        case other(String)

        init(_ name: String) {
            self = PackedProperties.index(of: name).map(KeyToken.known) ?? .other(name)
        }
    }

    /// The names of the packed entries.
    private var keyTokens: [KeyToken] {
        var out = [KeyToken]()
        bytes.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            while reader.offset < buffer.count {
                out.append(reader.readKeyToken())
                reader.skipValue()
            }
        }
        return out
    }

    /// Appends the entries of the record `source` whose names are not in `except`.
    private static func appendEntries(of source: [UInt8], to out: inout [UInt8], except: KeyTokens) {
        source.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            while reader.offset < buffer.count {
                let start = reader.offset
                let token = reader.readKeyToken()
                reader.skipValue()
                if !except.contains(token) { out.append(contentsOf: buffer[start..<reader.offset]) }
            }
        }
    }

    /// `changed` replaces (or adds) those properties; `invalidated` ones are dropped (applied
    /// after `changed`, as PropertiesChanged is folded).
    mutating func merge(_ changed: [String: DBusValue], invalidated: [String]) {
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        var writer = PackedWriter()
        writer.bytes.reserveCapacity(bytes.count + changed.count * 16)
        // Keep the entries not replaced nor dropped, byte for byte.
        if !bytes.isEmpty {
            forEachEntry { key, reader in
                let start = reader.entryStart
                reader.skipValue()
                if changed[key] == nil, invalidated.isEmpty || !invalidated.contains(key) {
                    writer.bytes.append(contentsOf: bytes[start..<reader.offset])
                }
                return true
            }
        }
        // The new entries are written straight after the kept ones (one buffer, no allocation
        // per entry); one that cannot be packed is cut off again and kept decoded.
        for (key, value) in changed {
            if !unpacked.isEmpty { unpacked[key] = nil }
            guard invalidated.isEmpty || !invalidated.contains(key) else { continue }
            let entryStart = writer.bytes.count
            writer.writeKey(key)
            if !writer.writeValue(value) {
                writer.bytes.removeSubrange(entryStart...)
                unpacked[key] = value
            }
        }
        for key in invalidated { unpacked[key] = nil }
        bytes = writer.bytes
    }

    /// Calls `body` with each entry's name and a reader placed at its value, until it returns
    /// false. `body` may read the value, skip it, or leave it (the walk skips what is left).
    private func forEachEntry(_ body: (String, inout PackedReader) -> Bool) {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            while reader.offset < buffer.count {
                reader.entryStart = reader.offset
                guard let key = reader.readKey() else { return }
                let valueStart = reader.offset
                var entry = reader
                guard body(key, &entry) else { return }
                reader.offset = valueStart
                reader.skipValue()
            }
        }
    }

    /// Calls `body` with the index in ``knownNames`` of each entry with a known name and a
    /// reader placed at its value (entries with other names are skipped, as are values that
    /// could not be packed). `body` may read the value, skip it, or leave it.
    func forEachKnownEntry(_ body: (UInt8, inout PackedReader) -> Void) {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = PackedReader(buffer: buffer)
            while reader.offset < buffer.count {
                let index = reader.byte()
                if index == Self.otherName { reader.skipString() }
                let valueStart = reader.offset
                if index != Self.otherName {
                    var entry = reader
                    body(index, &entry)
                    reader.offset = valueStart
                }
                reader.skipValue()
            }
        }
    }

    static func key(index: UInt8) -> String? {
        Int(index) < knownNames.count ? knownNames[Int(index)] : nil
    }

    static func index(of key: String) -> UInt8? { knownIndex[key] }
    static var other: UInt8 { otherName }

    /// A record of already packed bytes (``PackedWriter``'s output).
    init(bytes: [UInt8]) { self.bytes = bytes }
}
