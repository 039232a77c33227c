import BlueZKit

/// What the records of every subcommand share: SIG names in text, fixed-width hex, padding,
/// control characters neutralised (field names documented in man/blectl.1).
enum Records {
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
