#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The command line as the kernel passed it: bytes, which Swift's `CommandLine.arguments`
/// would silently repair to U+FFFD where they are not valid UTF-8 (so that `write --text`
/// would send bytes the user never typed).
enum RawArguments {
    /// The process's arguments without argv[0], as bytes.
    static func fromProcess() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: argument, count: strlen(argument)))
        }
    }

    /// The arguments as strings, or the usage error for the first one that is not valid
    /// UTF-8: `Invalid argument 'caf\xe9': not valid UTF-8 (byte 0xe9 at offset 3)`, for the
    /// subcommand the rest of the command line names.
    static func decode(_ raw: [[UInt8]]) -> Result<[String], UsageError> {
        let repaired = raw.map { String(decoding: $0, as: UTF8.self) }
        guard let bad = raw.first(where: { String(validating: $0, as: UTF8.self) == nil }) else { return .success(repaired) }
        let subcommand: String? = switch parseCommandLine(repaired) {
        case .success(.run(_, let subcommand)): type(of: subcommand.command).configuration.name
        case .failure(let error): error.subcommand
        case .success: nil
        }
        let offset = firstInvalidOffset(bad)
        let byte = Records.hex(bad[offset], digits: 2)
        if let index = raw.firstIndex(of: bad), let secret = secretOption(valued: index, in: repaired) {
            let inValue = offset - secret.valueStart
            return .failure(UsageError("Invalid value for '--\(secret.name)': not valid UTF-8 (byte \(byte) at offset \(inValue))",
                                       subcommand: subcommand))
        }
        return .failure(UsageError("Invalid argument '\(escaped(bad))': not valid UTF-8 (byte \(byte) at offset \(offset))",
                                   subcommand: subcommand))
    }

    /// The long name of the secret option (`bindkey`) whose value the argument at `index` is
    /// (`--bindkey VALUE` or `--bindkey=VALUE`), and where in the argument that value starts
    /// (in bytes), if any: its value is never repeated.
    static func secretOption(valued index: Int, in arguments: [String]) -> (name: String, valueStart: Int)? {
        let secrets = Set(Self.secretOptionNames(of: Blectl.spec))
        let argument = arguments[index]
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            let name = String(argument[argument.index(argument.startIndex, offsetBy: 2)..<equals])
            if secrets.contains(name) { return (name, name.utf8.count + 3) }
        }
        guard index > 0, arguments[index - 1].hasPrefix("--") else { return nil }
        let name = String(arguments[index - 1].dropFirst(2))
        return secrets.contains(name) ? (name, 0) : nil
    }

    /// The long names of every secret option of `command` and its subcommands.
    private static func secretOptionNames(of command: CommandSpec) -> [String] {
        command.options.filter(\.isSecret).map(\.long) + command.subcommands.flatMap(secretOptionNames)
    }

    /// Where the first byte that does not begin a valid UTF-8 sequence is.
    static func firstInvalidOffset(_ bytes: [UInt8]) -> Int {
        var start = 0
        while start < bytes.count {
            // The longest valid prefix from `start`, one scalar at a time.
            let length = (1...min(4, bytes.count - start)).first { String(validating: bytes[start..<start + $0], as: UTF8.self) != nil }
            guard let length else { return start }
            start += length
        }
        return bytes.count
    }

    /// `bytes` as UTF-8 where valid, `\xNN` for every byte that is not (as bash's `$'…'`).
    static func escaped(_ bytes: [UInt8]) -> String {
        var text = ""
        var start = 0
        while start < bytes.count {
            if let length = (1...min(4, bytes.count - start)).first(where: { String(validating: bytes[start..<start + $0], as: UTF8.self) != nil }) {
                text += Records.printable(String(decoding: bytes[start..<start + length], as: UTF8.self))
                start += length
            } else {
                text += "\\x" + Records.hex(bytes[start], digits: 2).dropFirst(2)
                start += 1
            }
        }
        return text
    }
}
