import BlueZKit

/// The lines of `--from`: each an address (`C0:FF:EE:00:00:01`), or a JSON object with an
/// `"address"` string (JSON Lines, as `scan` prints them); blank lines skipped. Read as they
/// come, so that `blectl scan | blectl get-battery --from -` starts on each device as soon as
/// scan prints it.
enum AddressLines {
    /// What one line gives: an address, or the reason it gives none (its error line, 64).
    enum Entry: Sendable, Equatable {
        case address(BluetoothAddress)
        case unusable(UnusableLine)
    }

    /// The longest line taken: a longer one is unusable (nothing blectl prints comes near).
    static let maximumLineLength = 65536

    /// The entries of `input`, line by line as they are read; ends at the end of the input.
    /// - Throws: ``InputError`` when the input cannot be read; `CancellationError`.
    static func entries(of input: FileInput, _ take: (Entry) async -> Void) async throws {
        try await input.forEachLine(maximumLength: maximumLineLength) { number, bytes in
            guard let bytes else {
                await take(.unusable(UnusableLine(source: input.source, number: number, text: "(a line of more than \(maximumLineLength) bytes)")))
                return
            }
            if let entry = entry(bytes, number: number, source: input.source) { await take(entry) }
        }
    }

    /// What the line says: nil for a blank one.
    static func entry(_ bytes: ArraySlice<UInt8>, number: Int, source: InputSource) -> Entry? {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return nil }
        let trimmed = bytes[first...last]
        let unusable = Entry.unusable(UnusableLine(source: source, number: number, text: String(decoding: trimmed, as: UTF8.self)))
        if trimmed.first == UInt8(ascii: "{") {
            var reader = JSONReader(Array(trimmed))
            guard let text = reader.addressOfObject(), let address = BluetoothAddress(text) else { return unusable }
            return .address(address)
        }
        guard let text = String(validating: trimmed, as: UTF8.self), let address = BluetoothAddress(text) else { return unusable }
        return .address(address)
    }
}

/// A line of `--from` that is neither an address nor a JSON object with one: its device's
/// line says so (64), and the run goes on.
struct UnusableLine: CommandError, Equatable {
    var source: InputSource
    var number: Int
    var text: String

    var status: ExitStatus { .usage }

    var description: String {
        let place = source == .standardInput ? "standard input" : "'\(source)'"
        let shown = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return "line \(number) of \(place) is neither an address like C0:FF:EE:00:00:01 nor a JSON object with an \"address\": \(Records.printable(shown))"
    }
}

/// Just enough of JSON (RFC 8259) to take the `"address"` string of an object on one line,
/// the rest of the object checked and skipped.
private struct JSONReader {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The top-level `"address"` member's string, when the whole line is one JSON object.
    mutating func addressOfObject() -> String? {
        var address: String?
        guard take(UInt8(ascii: "{")) else { return nil }
        if !take(UInt8(ascii: "}")) {
            repeat {
                guard let key = string(), take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                if key == "address", peek == UInt8(ascii: "\"") {
                    guard let value = string() else { return nil }
                    address = value
                } else if !skipValue() {
                    return nil
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
        }
        skipSpace()
        return index == bytes.count ? address : nil
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard peek == byte else { return false }
        index += 1
        return true
    }

    /// A string (escapes decoded only as far as an address needs: any escape makes it no address).
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var escaped = false
        while let byte = peek {
            index += 1
            if byte == UInt8(ascii: "\\") {
                escaped = true
                guard peek != nil else { return nil }
                index += 1
            } else if byte == UInt8(ascii: "\"") {
                return escaped ? "" : String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
            } else if byte < 0x20 {
                return nil
            }
        }
        return nil
    }

    private mutating func skipValue() -> Bool {
        skipSpace()
        switch peek {
        case UInt8(ascii: "\"")?:
            return string() != nil
        case UInt8(ascii: "{")?:
            index += 1
            if take(UInt8(ascii: "}")) { return true }
            repeat {
                guard string() != nil, take(UInt8(ascii: ":")), skipValue() else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}"))
        case UInt8(ascii: "[")?:
            index += 1
            if take(UInt8(ascii: "]")) { return true }
            repeat {
                guard skipValue() else { return false }
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "]"))
        case let byte?:
            // A number, true, false or null.
            let start = index
            let allowed = Set("0123456789+-.eEtruefalsn".utf8)
            while let next = peek, allowed.contains(next) { index += 1 }
            let word = String(decoding: bytes[start..<index], as: UTF8.self)
            return ["true", "false", "null"].contains(word) || (byte != UInt8(ascii: "t") && byte != UInt8(ascii: "f") && byte != UInt8(ascii: "n") && index > start)
        case nil:
            return false
        }
    }
}
