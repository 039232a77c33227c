/// The raw strings `ArgumentParser` matched to one command line, and typed access to
/// them through the declarations that describe them.
struct ParsedValues: Sendable, Equatable {
    /// Long option name → the values given, in command-line order.
    var optionValues: [String: [String]] = [:]
    /// Long names of the flags given.
    var flags: Set<String> = []
    /// How many times each flag given was given (`-vv`: 2).
    var flagCounts: [String: Int] = [:]
    /// Argument value name → the string given.
    var arguments: [String: String] = [:]
    /// Canonical name of the subcommand, for error messages; `nil` at the top level.
    var subcommand: String?

    /// Whether `option` (flag or option) appears at all.
    func contains(_ long: String) -> Bool {
        flags.contains(long) || optionValues[long] != nil
    }

    /// Whether `flag` was given.
    func isSet(_ flag: Flag) -> Bool {
        flags.contains(flag.spec.long)
    }

    /// How many times `flag` was given (0 when absent); more than 1 only for a repeatable one.
    func count(of flag: Flag) -> Int {
        flagCounts[flag.spec.long] ?? 0
    }

    /// The converted value of a single-valued option, or its default, or `nil`.
    ///
    /// - Throws: `UsageError` "Invalid value 'x' for '--opt': expected …" when the
    ///   value does not convert.
    func value<Value>(of option: Option<Value>) throws(UsageError) -> Value? {
        guard let raw = optionValues[option.spec.long]?.last else { return option.defaultValue }
        return try convert(raw, with: option.parser, for: option.spec.displayName)
    }

    /// Like `value(of:)` for an option that has a default, so always has a value.
    ///
    /// - Throws: `UsageError` as `value(of:)`; "Missing value for '--opt'" if the
    ///   option has no default and was not given.
    func requiredValue<Value>(of option: Option<Value>) throws(UsageError) -> Value {
        guard let value = try value(of: option) else {
            throw UsageError("Missing value for \(option.spec.displayName.quotedForMessage)", subcommand: subcommand)
        }
        return value
    }

    /// Every converted value of a repeatable option, in command-line order; the
    /// default (if any) as the only element when it was not given, else `[]`.
    ///
    /// - Throws: `UsageError` for the first value that does not convert.
    func values<Value>(of option: Option<Value>) throws(UsageError) -> [Value] {
        guard let raws = optionValues[option.spec.long] else { return option.defaultValue.map { [$0] } ?? [] }
        var values: [Value] = []
        for raw in raws {
            values.append(try convert(raw, with: option.parser, for: option.spec.displayName))
        }
        return values
    }

    /// The converted positional argument, or `nil` when an optional one was not given.
    ///
    /// - Throws: `UsageError` "Invalid address 'xx': expected …" when it does not
    ///   convert; "Missing expected argument '<name>'" when a required one is absent.
    func value<Value>(of argument: Argument<Value>) throws(UsageError) -> Value? {
        guard let raw = arguments[argument.spec.valueName] else {
            guard argument.spec.isOptional else {
                throw UsageError(
                    "Missing expected argument \(argument.spec.displayName.quotedForMessage)",
                    subcommand: subcommand
                )
            }
            return nil
        }
        return try convert(raw, with: argument.parser, for: nil)
    }

    /// Like `value(of:)` for a required argument.
    func requiredValue<Value>(of argument: Argument<Value>) throws(UsageError) -> Value {
        guard let value = try value(of: argument) else {
            throw UsageError(
                "Missing expected argument \(argument.spec.displayName.quotedForMessage)",
                subcommand: subcommand
            )
        }
        return value
    }

    /// A required argument converted with `parser` instead of the one it was declared with,
    /// for an argument whose kind a flag decides (`write`'s value: hex, or text with `--text`).
    ///
    /// - Throws: `UsageError` as `value(of:)`: "Invalid value 'x': expected …", or "Missing
    ///   expected argument '<name>'".
    func requiredValue<Declared, Value>(of argument: Argument<Declared>, parsedWith parser: ValueParser<Value>) throws(UsageError) -> Value {
        guard let raw = arguments[argument.spec.valueName] else {
            throw UsageError(
                "Missing expected argument \(argument.spec.displayName.quotedForMessage)",
                subcommand: subcommand
            )
        }
        return try convert(raw, with: parser, for: nil)
    }

    private func convert<Value>(
        _ raw: String, with parser: ValueParser<Value>, for optionName: String?
    ) throws(UsageError) -> Value {
        do {
            return try parser.parse(raw)
        } catch {
            let target = optionName.map { " for \($0.quotedForMessage)" } ?? ""
            throw UsageError(
                "Invalid \(parser.noun) \(raw.quotedForMessage)\(target): expected \(error.text)",
                subcommand: subcommand
            )
        }
    }
}
