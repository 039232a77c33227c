/// One D-Bus value, decoded into plain Swift so it can cross threads.
///
/// Containers carry the signatures of their elements, so an empty array or dictionary still
/// encodes with the right type. A byte array (`ay`) is always decoded as ``bytes(_:)``;
/// `a{..}` as ``dictionary(keySignature:valueSignature:_:)``. Source: the D-Bus
/// specification, "Type System".
public enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(ObjectPath)
    case signature(String)
    /// A Unix file descriptor (`h`), owned by the object: a received one is this process's
    /// own duplicate, closed when the last copy of the value goes away unless taken; a sent
    /// one is duplicated by libdbus and stays the caller's (``UnixFileDescriptor``).
    case unixFD(UnixFileDescriptor)
    /// `ay`: the common BlueZ value type (GATT values, manufacturer data).
    case bytes([UInt8])
    /// `a<elementSignature>` other than `ay` and dictionaries.
    indirect case array(elementSignature: String, [DBusValue])
    /// `a{<key><value>}`; entries keep the wire order.
    indirect case dictionary(keySignature: String, valueSignature: String, [DictEntry])
    /// `(...)`
    case structure([DBusValue])
    /// `v`
    indirect case variant(DBusValue)

    public struct DictEntry: Sendable, Hashable {
        public var key: DBusValue
        public var value: DBusValue
        public init(_ key: DBusValue, _ value: DBusValue) { self.key = key; self.value = value }
    }

    /// The value's D-Bus type signature (`s`, `a{sv}`, `(ii)`).
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }
}

// MARK: - Convenience constructors

extension DBusValue {
    /// `a{sv}` from a Swift dictionary (keys sorted, so encoding is deterministic).
    public static func stringVariantDictionary(_ entries: [String: DBusValue]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "v",
                    entries.sorted { $0.key < $1.key }.map { DictEntry(.string($0.key), .variant($0.value)) })
    }

    /// `as`
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(elementSignature: "s", strings.map { .string($0) })
    }
}

// MARK: - Typed access (nil when the value has another type; variants are looked through)

extension DBusValue {
    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    public var string: String? {
        if case .string(let s) = unwrapped { return s }
        return nil
    }

    public var objectPath: ObjectPath? {
        if case .objectPath(let p) = unwrapped { return p }
        return nil
    }

    public var bool: Bool? {
        if case .boolean(let b) = unwrapped { return b }
        return nil
    }

    /// Any integer type that fits in an `Int`.
    public var integer: Int? {
        switch unwrapped {
        case .byte(let v): Int(v)
        case .int16(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int64(let v): Int(v)
        case .uint64(let v): v <= UInt64(Int.max) ? Int(v) : nil
        default: nil
        }
    }

    /// `ay`, or an array of bytes built by hand.
    public var bytes: [UInt8]? {
        switch unwrapped {
        case .bytes(let b): return b
        case .array("y", let values):
            var out = [UInt8]()
            out.reserveCapacity(values.count)
            for case .byte(let b) in values { out.append(b) }
            return out.count == values.count ? out : nil
        default: return nil
        }
    }

    /// The file descriptor of an `h` value (still owned by the object: see ``UnixFileDescriptor``).
    public var unixFD: UnixFileDescriptor? {
        if case .unixFD(let fd) = unwrapped { return fd }
        return nil
    }

    /// Whether a file descriptor is anywhere in the value (containers and variants included).
    var containsUnixFD: Bool {
        switch self {
        case .unixFD: true
        case .array(_, let values): values.contains(where: \.containsUnixFD)
        case .dictionary(_, _, let entries): entries.contains { $0.key.containsUnixFD || $0.value.containsUnixFD }
        case .structure(let fields): fields.contains(where: \.containsUnixFD)
        case .variant(let inner): inner.containsUnixFD
        default: false
        }
    }

    /// `as` (non-string elements make it nil).
    public var stringArray: [String]? {
        guard case .array(_, let values) = unwrapped else { return nil }
        var out = [String]()
        out.reserveCapacity(values.count)
        for value in values {
            guard case .string(let s) = value else { return nil }
            out.append(s)
        }
        return out
    }

    /// Array elements (any element type).
    public var arrayElements: [DBusValue]? {
        switch unwrapped {
        case .array(_, let values): values
        case .bytes(let b): b.map { .byte($0) }
        default: nil
        }
    }

    /// Dictionary entries (any key and value types).
    public var dictionaryEntries: [DictEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// `a{s*}` as a Swift dictionary, variants unwrapped; entries with non-string keys skipped.
    public var stringKeyedDictionary: [String: DBusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var out = [String: DBusValue](minimumCapacity: entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key else { continue }
            out[key] = entry.value.unwrapped
        }
        return out
    }
}
