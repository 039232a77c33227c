/// How the GATT toolbox commands take a value from the command line: hex bytes (`0102ff`,
/// `01:02:ff`, `0x0102ff`), or UTF-8 text with `--text`; 1 to 512 bytes either way. The
/// `<value>` argument is declared by each command (as a string: `--text` decides its kind),
/// and converted by ``bytes(_:text:)`` in its `validate()`.
enum ValueInput {
    /// The bytes `value` stands for: its UTF-8 with `--text`, else its hex.
    /// - Throws: `UsageError` "Invalid value 'x': expected …".
    static func bytes(_ value: String, text: Bool) throws(UsageError) -> [UInt8] {
        try (text ? ValueParser.utf8Text : .hexBytes).convert(value, for: nil)
    }
}

extension FlagDeclaration {
    /// `--text`: `<value>` is text, not hex.
    static var text: Self { FlagDeclaration("text", help: "Take <value> as UTF-8 text instead of hex bytes.") }
}
