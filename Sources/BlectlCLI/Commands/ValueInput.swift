/// How the GATT toolbox commands take a value from the command line: hex bytes (`0102ff`,
/// `01:02:ff`, `0x0102ff`), or UTF-8 text with `--text`; 1 to 512 bytes either way.
enum ValueInput {
    static let textFlag = Flag("text", help: "Take <value> as UTF-8 text instead of hex bytes.")

    /// The `<value>` argument, read as a string and converted by ``bytes(of:from:)``.
    static func argument(help: String, optional: Bool = false) -> Argument<String> {
        Argument("value", help: help, parser: .verbatim, optional: optional)
    }

    /// The bytes `argument` stands for: its UTF-8 with `--text`, else its hex.
    /// - Throws: `UsageError` "Invalid value 'x': expected …" or a missing argument.
    static func bytes(of argument: Argument<String>, from values: ParsedValues) throws(UsageError) -> [UInt8] {
        try values.requiredValue(of: argument, parsedWith: values.isSet(textFlag) ? .utf8Text : .hexBytes)
    }
}
