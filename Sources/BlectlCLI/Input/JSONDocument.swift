/// A JSON text (RFC 8259) read into values that remember the line they start on, so that a
/// file a user wrote (a `serve` profile) can be faulted at the line and member concerned.
/// Objects keep their members in order; a duplicate member is an error.
struct JSONDocument {
    /// A value and the line (from 1) it starts on.
    struct Node {
        enum Value {
            case null
            case bool(Bool)
            case number(Double)
            case string(String)
            case array([Node])
            case object([(key: String, node: Node)])
        }
        var value: Value
        var line: Int

        /// The member `key` of an object.
        subscript(key: String) -> Node? {
            guard case .object(let members) = value else { return nil }
            return members.first { $0.key == key }?.node
        }

        /// What the value is, for messages: "a string", "an object", ...
        var kind: String {
            switch value {
            case .null: "null"
            case .bool: "a boolean"
            case .number: "a number"
            case .string: "a string"
            case .array: "an array"
            case .object: "an object"
            }
        }
    }

    /// A syntax error, at a line.
    struct SyntaxError: Error, Equatable {
        var line: Int
        var message: String
    }

    /// Parses `text`: one value, then nothing but white space.
    static func parse(_ text: String) throws(SyntaxError) -> Node {
        var parser = Parser(bytes: Array(text.utf8))
        let node = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.error("text after the end of the JSON value") }
        return node
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var line = 1

        /// Deeper than this is refused rather than risking the stack.
        static let maximumDepth = 64

        func error(_ message: String) -> SyntaxError { SyntaxError(line: line, message: message) }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\n"): line += 1
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): break
                default: return
                }
                index += 1
            }
        }

        mutating func value(depth: Int) throws(SyntaxError) -> Node {
            guard depth < Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
            skipSpace()
            guard index < bytes.count else { throw error("unexpected end of the text: a value was expected") }
            let start = line
            switch bytes[index] {
            case UInt8(ascii: "{"): return Node(value: try object(depth: depth), line: start)
            case UInt8(ascii: "["): return Node(value: try array(depth: depth), line: start)
            case UInt8(ascii: "\""): return Node(value: .string(try string()), line: start)
            case UInt8(ascii: "t"): try literal("true"); return Node(value: .bool(true), line: start)
            case UInt8(ascii: "f"): try literal("false"); return Node(value: .bool(false), line: start)
            case UInt8(ascii: "n"): try literal("null"); return Node(value: .null, line: start)
            default: return Node(value: .number(try number()), line: start)
            }
        }

        mutating func literal(_ word: String) throws(SyntaxError) {
            let utf8 = Array(word.utf8)
            guard bytes.count - index >= utf8.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
                throw error("unexpected character: expected a value")
            }
            index += utf8.count
        }

        mutating func object(depth: Int) throws(SyntaxError) -> Node.Value {
            index += 1
            var members: [(key: String, node: Node)] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let key = try string()
                if members.contains(where: { $0.key == key }) { throw error("member \"\(key)\" given twice") }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
                index += 1
                members.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard index < bytes.count else { throw error("unexpected end of the text: '}' was expected") }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or '}' after a member") }
                index += 1
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> Node.Value {
            index += 1
            var items: [Node] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw error("unexpected end of the text: ']' was expected") }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
                guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or ']' after an element") }
                index += 1
            }
        }

        mutating func string() throws(SyntaxError) -> String {
            index += 1
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: out, as: UTF8.self) else { throw error("a string that is not UTF-8") }
                    return text
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { break }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0c)
                    case UInt8(ascii: "n"): out.append(0x0a)
                    case UInt8(ascii: "r"): out.append(0x0d)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"): out += Array(String(try unicodeScalar()).utf8)
                    default: throw error("unknown escape \\\(Character(Unicode.Scalar(escape)))")
                    }
                case 0..<0x20:
                    throw error(byte == 0x0a ? "a string not closed before the end of its line" : "a control character in a string")
                default:
                    out.append(byte)
                }
            }
            throw error("a string not closed before the end of the text")
        }

        /// `\uXXXX` (its `u` read), with a surrogate pair's second half.
        mutating func unicodeScalar() throws(SyntaxError) -> Character {
            let first = try hex4()
            if (0xD800..<0xDC00).contains(first) {
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("a lone surrogate in a \\u escape")
                }
                index += 2
                let second = try hex4()
                guard (0xDC00..<0xE000).contains(second),
                      let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) else {
                    throw error("a lone surrogate in a \\u escape")
                }
                return Character(scalar)
            }
            guard let scalar = Unicode.Scalar(first) else { throw error("a lone surrogate in a \\u escape") }
            return Character(scalar)
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard bytes.count - index >= 4, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
                throw error("a \\u escape without four hex digits")
            }
            index += 4
            return value
        }

        mutating func number() throws(SyntaxError) -> Double {
            let start = index
            let allowed = Set("+-0123456789.eE".utf8)
            while index < bytes.count, allowed.contains(bytes[index]) { index += 1 }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard !text.isEmpty, text.first != "+", !text.hasPrefix("-+"), let number = Double(text), number.isFinite,
                  text.wholeMatch(of: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/) != nil else {
                throw error(text.isEmpty ? "unexpected character: expected a value" : "\"\(text)\" is not a JSON number")
            }
            return number
        }
    }
}
