/// A JSON object written member by member straight into bytes, with no ``JSONValue`` made:
/// `{`, then each `"key":value` (a comma between two), then `}`. The values are written by
/// the caller after ``key(_:)``, with the ``JSONValue`` writers, so the bytes are those the
/// same object as a ``JSONValue`` serializes to.
struct JSONObjectWriter: ~Copyable {
    private var empty = true

    /// Writes `{`.
    init(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
    }

    /// Writes the next member's key and its colon (`,"key":` after the first). `key` must
    /// need no escape (a plain ASCII name).
    mutating func key(_ key: StaticString, into out: inout [UInt8]) {
        if !empty { out.append(UInt8(ascii: ",")) }
        empty = false
        out.append(UInt8(ascii: "\""))
        JSONValue.writeLiteral(key, into: &out)
        JSONValue.writeLiteral("\":", into: &out)
    }

    /// Writes `}`.
    consuming func end(into out: inout [UInt8]) {
        out.append(UInt8(ascii: "}"))
    }
}
