/// The raw strings `ArgumentParser` matched to one command line, and their conversion
/// through the declarations' parsers (which the property wrappers ask for as the command's
/// type is initialized: ``ArgumentScope``).
struct ParsedValues: Sendable, Equatable {
    /// Long option name → the values given, in command-line order.
    var optionValues: [String: [String]] = [:]
    /// Long names of the flags given.
    var flags: Set<String> = []
    /// How many times each flag given was given (`-vv`: 2).
    var flagCounts: [String: Int] = [:]
    /// Argument value name → the string given.
    var arguments: [String: String] = [:]
    /// A repeating argument's value name → the strings given, in order.
    var repeatedArguments: [String: [String]] = [:]
    /// Canonical name of the subcommand, for error messages; `nil` at the top level.
    var subcommand: String?

    /// Whether `option` (flag or option) appears at all.
    func contains(_ long: String) -> Bool {
        flags.contains(long) || optionValues[long] != nil
    }

    /// How many times the flag `long` was given (0 when absent); more than 1 only for a
    /// repeatable one.
    func count(ofFlag long: String) -> Int {
        flagCounts[long] ?? 0
    }

    /// The converted value of a single-valued option (the last one given), or `nil` when it
    /// is absent.
    ///
    /// - Throws: `UsageError` "Invalid value 'x' for '--opt': expected …" when the
    ///   value does not convert.
    func value<Value>(ofOption long: String, parser: ValueParser<Value>) throws(UsageError) -> Value? {
        guard let raw = optionValues[long]?.last else { return nil }
        return try convert(raw, with: parser, for: long)
    }

    /// Every converted value of a repeatable option, in command-line order; `[]` when absent.
    ///
    /// - Throws: `UsageError` for the first value that does not convert.
    func values<Value>(ofOption long: String, parser: ValueParser<Value>) throws(UsageError) -> [Value] {
        var values: [Value] = []
        for raw in optionValues[long] ?? [] {
            values.append(try convert(raw, with: parser, for: long))
        }
        return values
    }

    /// The converted positional argument, or `nil` when an optional one was not given (the
    /// parser has already refused a required one missing).
    ///
    /// - Throws: `UsageError` "Invalid address 'xx': expected …" when it does not convert.
    func value<Value>(ofArgument valueName: String, parser: ValueParser<Value>) throws(UsageError) -> Value? {
        guard let raw = arguments[valueName] else { return nil }
        return try convert(raw, with: parser, for: nil)
    }

    /// Every converted word of a repeating argument, in order; `[]` when none was given.
    ///
    /// - Throws: `UsageError` "Invalid address 'xx': expected …" when the first word does not
    ///   convert, "Unexpected argument 'xx'" when a later one does not (as for a word after
    ///   the one argument a command takes).
    func values<Value>(ofArgument valueName: String, parser: ValueParser<Value>) throws(UsageError) -> [Value] {
        var values: [Value] = []
        for raw in repeatedArguments[valueName] ?? [] {
            if values.isEmpty {
                values.append(try convert(raw, with: parser, for: nil))
            } else {
                guard let value = try? parser.parse(raw) else {
                    throw UsageError("Unexpected argument \(raw.quotedForMessage)", subcommand: subcommand)
                }
                values.append(value)
            }
        }
        return values
    }

    /// - Parameter long: the option's long name, nil for an argument.
    private func convert<Value>(_ raw: String, with parser: ValueParser<Value>, for long: String?) throws(UsageError) -> Value {
        do throws(UsageError) {
            return try parser.convert(raw, for: long.map { "--" + $0 })
        } catch {
            throw error.concerning(subcommand)
        }
    }
}

extension ValueParser {
    /// `raw` converted, or the usage error saying what was expected: "Invalid value 'x' for
    /// '--opt': expected …" (without "for …" when `optionName` is nil: an argument; without
    /// 'x' for a secret).
    func convert(_ raw: String, for optionName: String?) throws(UsageError) -> Value {
        do {
            return try parse(raw)
        } catch {
            let target = optionName.map { " for \($0.quotedForMessage)" } ?? ""
            let shown = isSecret ? "" : " " + raw.quotedForMessage
            throw UsageError("Invalid \(noun)\(shown)\(target): expected \(error.text)")
        }
    }
}
