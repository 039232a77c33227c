/// A JSON value with object keys kept in the order written, so output is stable and
/// readable. Serialization follows RFC 8259: strings escape `"`, `\` and every control
/// character, so any device name (control characters included) gives valid JSON.
///
/// Not `indirect`: arrays and objects hold their values in their own buffers already, and a
/// boxed case would cost an allocation per value.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    /// A number with a fraction (`2.051`); NaN and infinities, which JSON lacks, are `null`.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        lhs.serialized() == rhs.serialized()
    }

    static func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    static func optional(_ value: Int?) -> JSONValue { value.map { .int($0) } ?? .null }
    static func optional(_ value: Bool?) -> JSONValue { value.map { .bool($0) } ?? .null }

    /// Compact JSON, one line.
    func serialized() -> String {
        String(decoding: serializedUTF8(), as: UTF8.self)
    }

    /// Compact JSON, one line, as UTF-8 (what stdout gets; no String built on the way).
    func serializedUTF8() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    /// Appends the compact JSON to `out`.
    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: b ? "true".utf8 : "false".utf8)
        case .int(let i): Self.writeInt(i, into: &out)
        case .double(let d): out.append(contentsOf: d.isFinite ? String(d).utf8 : "null".utf8)
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (i, value) in values.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A literal's UTF-8 bytes, copied as one block (appending a `String.UTF8View` goes
    /// through the generic sequence copy, byte by byte).
    @inline(__always)
    static func writeLiteral(_ s: StaticString, into out: inout [UInt8]) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    /// Decimal digits, `-` first when negative (Int.min included).
    static func writeInt(_ i: Int, into out: inout [UInt8]) {
        if i < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = i.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 20 digits at most, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            out.append(contentsOf: buffer[(24 - count)...])
        }
    }

    /// A JSON string: `"` and `\` escaped, `\n` `\r` `\t` by name, the other C0 controls,
    /// DEL and the C1 controls (U+0080-U+009F, UTF-8 `C2 80`-`C2 9F`) as `\u00XX`; every
    /// other byte copied (a Swift String is valid UTF-8).
    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var i = 0
            var copied = 0  // bytes[copied..<i] need no escape and are not written yet
            while i < bytes.count {
                let byte = bytes[i]
                let escapedLength: Int
                let code: UInt8
                if byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte < 0x7F { i += 1; continue }
                if byte == 0xC2, i + 1 < bytes.count, (0x80...0x9F).contains(bytes[i + 1]) {
                    escapedLength = 2
                    code = bytes[i + 1]
                } else if byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F {
                    escapedLength = 1
                    code = byte
                } else {
                    i += 1  // another byte of a multi-byte character
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<i]))
                switch code {
                case 0x22: out.append(contentsOf: #"\""#.utf8)
                case 0x5C: out.append(contentsOf: #"\\"#.utf8)
                case 0x0A: out.append(contentsOf: #"\n"#.utf8)
                case 0x0D: out.append(contentsOf: #"\r"#.utf8)
                case 0x09: out.append(contentsOf: #"\t"#.utf8)
                default:
                    out.append(contentsOf: #"\u00"#.utf8)
                    out.append(lowercaseHexDigit(code >> 4))
                    out.append(lowercaseHexDigit(code & 0xF))
                }
                i += escapedLength
                copied = i
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// `bytes` as a JSON string of lowercase hex, two digits a byte (`"0102"`, as
    /// ``Swift/Array/hexString`` writes them).
    static func writeHex(_ bytes: some Sequence<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            out.append(lowercaseHexDigit(byte >> 4))
            out.append(lowercaseHexDigit(byte & 0xF))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `value` as a JSON string of 4 lowercase hex digits (`"05f1"`, as ``Records/hex4(_:)``).
    static func writeHex4(_ value: UInt16, into out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { writeHex($0, into: &out) }
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hex, two digits a byte ("0102").
    var hexString: String {
        String(unsafeUninitializedCapacity: count * 2) { out in
            for (i, b) in enumerated() {
                out[2 * i] = lowercaseHexDigit(b >> 4)
                out[2 * i + 1] = lowercaseHexDigit(b & 0xF)
            }
            return count * 2
        }
    }
}

/// The ASCII lowercase hex digit of `nibble` (0...15).
@inline(__always)
func lowercaseHexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
}
