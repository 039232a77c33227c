import BlueZKit

/// What the records of every subcommand share: SIG names in text, fixed-width hex, padding,
/// control characters neutralised (field names documented in man/blectl.1).
enum Records {
    /// A value as JSON fields: `value`, lowercase hex; `text`, the bytes as UTF-8 when they
    /// are valid UTF-8 without control characters (C0, DEL, C1), else null.
    static func value(_ bytes: [UInt8]) -> [(String, JSONValue)] {
        [("value", .string(bytes.hexString)), ("text", .optional(text(of: bytes)))]
    }

    /// A value's hex in text output: `57`, or `(empty)` for no bytes.
    static func hexForPeople(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "(empty)" : bytes.hexString
    }

    /// A value's text in text output: quoted (`"W"`), or `-` when the bytes are not clean
    /// UTF-8 (``text(of:)``).
    static func textForPeople(_ bytes: [UInt8]) -> String {
        text(of: bytes).map { "\"\($0)\"" } ?? "-"
    }

    /// A UUID as messages name it: its JSON form, with the SIG name after it where there is
    /// one (`180f (Battery Service)`).
    static func named(_ uuid: BluetoothUUID) -> String {
        uuid.shortString + label(uuid)
    }

    /// The bytes as a string when they are valid UTF-8 without control characters.
    static func text(of bytes: [UInt8]) -> String? {
        guard let string = String(validating: bytes, as: UTF8.self) else { return nil }
        let control = string.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
        return control ? nil : string
    }

    static func label(_ uuid: BluetoothUUID) -> String {
        AssignedNumbers.name(for: uuid).map { " (\($0))" } ?? ""
    }

    static func hex4(_ value: UInt16) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(value >> 12)], digits[Int(value >> 8 & 0xF)], digits[Int(value >> 4 & 0xF)], digits[Int(value & 0xF)]])
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    /// Control characters shown as `?` in text output, so a name cannot move the terminal.
    static func printable(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}
