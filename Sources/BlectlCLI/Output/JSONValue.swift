/// A JSON value with object keys kept in the order written, so output is stable and
/// readable. Serialization follows RFC 8259: strings escape `"`, `\` and every control
/// character, so any device name (control characters included) gives valid JSON.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    /// A number with a fraction (`2.051`); NaN and infinities, which JSON lacks, are `null`.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        lhs.serialized() == rhs.serialized()
    }

    public static func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
    public static func optional(_ value: Int?) -> JSONValue { value.map { .int($0) } ?? .null }
    public static func optional(_ value: Bool?) -> JSONValue { value.map { .bool($0) } ?? .null }

    /// Compact JSON, one line.
    public func serialized() -> String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? String(d) : "null"
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let values):
            out += "["
            for (i, value) in values.enumerated() {
                if i > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                Self.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    private static let hex: [Character] = Array("0123456789abcdef")

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        // Fast path: nothing to escape (the common case: addresses, UUIDs, hex, names).
        // 0xC2 starts U+0080-U+00BF, among them the C1 controls, escaped below.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F || $0 == 0xC2 }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                out += "\\u00"
                out.append(hex[Int(scalar.value >> 4)])
                out.append(hex[Int(scalar.value & 0xF)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hex, two digits a byte ("0102").
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(count * 2)
        for b in self {
            bytes.append(digits[Int(b >> 4)])
            bytes.append(digits[Int(b & 0xF)])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
