/// The value of a record's field in JSON: written straight into a line (``JSONLines``), or
/// made into a ``JSONValue`` where the record is built as an object. Strings, numbers,
/// booleans, none, a time and bytes as hex are written as they are; any other value is a
/// ``JSONValue``. Both forms give the same bytes: each conformance writes what its
/// ``jsonValue`` serializes to, through the same ``JSONValue`` writers.
protocol JSONFieldValue: SendableMetatype {
    /// The value as a ``JSONValue``.
    var jsonValue: JSONValue { get }
    /// Appends the value's JSON (``jsonValue`` serialized) to `lines`.
    func write(to lines: inout JSONLines)
}

/// JSON Lines being written: their bytes, and the date and time of the last second a record
/// was written in (a stream's records then make no String and no `gmtime_r` call for their
/// time).
struct JSONLines {
    var bytes: [UInt8] = []
    var clock = RFC3339Writer()

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Forgets the lines written, keeping their storage (and the time of the last second).
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }
}

extension JSONValue: JSONFieldValue {
    var jsonValue: JSONValue { self }
    func write(to lines: inout JSONLines) { write(into: &lines.bytes) }
}

extension String: JSONFieldValue {
    var jsonValue: JSONValue { .string(self) }
    func write(to lines: inout JSONLines) { JSONValue.writeString(self, into: &lines.bytes) }
}

extension Int: JSONFieldValue {
    var jsonValue: JSONValue { .int(self) }
    func write(to lines: inout JSONLines) { JSONValue.writeInt(self, into: &lines.bytes) }
}

extension Bool: JSONFieldValue {
    var jsonValue: JSONValue { .bool(self) }
    func write(to lines: inout JSONLines) { JSONValue.bool(self).write(into: &lines.bytes) }
}

extension Optional: JSONFieldValue where Wrapped: JSONFieldValue {
    var jsonValue: JSONValue { self?.jsonValue ?? .null }
    func write(to lines: inout JSONLines) {
        if let self { self.write(to: &lines) } else { JSONValue.writeLiteral("null", into: &lines.bytes) }
    }
}

/// An instant as ``Records/rfc3339(sinceEpoch:)`` gives it, as a JSON string.
struct RFC3339Time: JSONFieldValue {
    /// The duration since the Unix epoch.
    let sinceEpoch: Duration

    var jsonValue: JSONValue { .string(Records.rfc3339(sinceEpoch: sinceEpoch)) }
    func write(to lines: inout JSONLines) { lines.clock.append(sinceEpoch, to: &lines.bytes) }
}

/// Bytes as a JSON string of lowercase hex, two digits a byte (`"0102"`).
struct HexBytes: JSONFieldValue {
    let bytes: [UInt8]

    var jsonValue: JSONValue { .string(bytes.hexString) }
    func write(to lines: inout JSONLines) { JSONValue.writeHex(bytes, into: &lines.bytes) }
}
