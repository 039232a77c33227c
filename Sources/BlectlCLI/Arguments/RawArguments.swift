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
        return .failure(UsageError("Invalid argument '\(escaped(bad))': not valid UTF-8 (byte \(Records.hex(bad[offset], digits: 2)) at offset \(offset))",
                                   subcommand: subcommand))
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
