/// Typed declarations of options, flags and arguments. Each one is written once and
/// carries both what the parser matches (`spec`) and how the string becomes a value
/// (`parser`), so the help text and the parsing cannot drift apart; the default shown
/// in help is rendered from the default used.

/// An option taking a value: `--timeout <seconds>` / `--timeout=<seconds>`.
struct Option<Value: Sendable>: Sendable {
    let spec: OptionSpec
    let parser: ValueParser<Value>
    /// Used when the option is absent; shown in help as `(default: …)`.
    let defaultValue: Value?

    /// - Parameters:
    ///   - long: the name without dashes, `"timeout"`.
    ///   - short: a one-letter alias, `t` for `-t 5` / `-t5`; `nil` for none.
    ///   - valueName: shown as `<seconds>`.
    ///   - help: one or more sentences, without the default.
    ///   - parser: converts and validates the value.
    ///   - default: the value when the option is absent; `nil` for none.
    ///   - repeatable: may be given more than once; read with `ParsedValues.values(of:)`.
    ///   - global: accepted before and after the subcommand (root options only).
    ///   - required: must be given (never with a default).
    init(
        _ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Value>,
        default defaultValue: Value? = nil, repeatable: Bool = false, global: Bool = false, required: Bool = false
    ) {
        self.spec = OptionSpec(
            long: long, short: short, kind: .value(valueName: valueName), help: help,
            defaultDescription: defaultValue.map(parser.describe),
            isRepeatable: repeatable, isGlobal: global, isRequired: required && defaultValue == nil,
            completion: parser.completion
        )
        self.parser = parser
        self.defaultValue = defaultValue
    }
}

extension Option where Value == Duration {
    /// `-t, --timeout <seconds>`, which every subcommand takes.
    /// - Parameters:
    ///   - value: the limit when the option is absent.
    ///   - help: what the limit bounds, for the help text.
    ///   - parser: `.seconds` (0 allowed), `.seconds(allowingZero: false)`, or
    ///     `.listeningSeconds(...)` where `inf` is allowed.
    static func timeout(
        default value: Duration, help: String = "Give up after this many seconds; decimals allowed.",
        parser: ValueParser<Duration> = .seconds
    ) -> Option<Duration> {
        Option("timeout", short: "t", valueName: "seconds", help: help, parser: parser, default: value)
    }
}

/// An option without a value: `--updates`. Absent means false.
struct Flag: Sendable {
    let spec: OptionSpec

    /// - Parameter repeatable: may be given more than once, each time counted (`-vv`); read
    ///   with `ParsedValues.count(of:)`.
    init(_ long: String, short: Character? = nil, help: String, repeatable: Bool = false, global: Bool = false) {
        spec = OptionSpec(
            long: long, short: short, kind: .flag, help: help,
            defaultDescription: nil, isRepeatable: repeatable, isGlobal: global
        )
    }
}

/// A positional argument: `<address>`.
struct Argument<Value: Sendable>: Sendable {
    let spec: ArgumentSpec
    let parser: ValueParser<Value>

    init(_ valueName: String, help: String, parser: ValueParser<Value>, optional: Bool = false) {
        spec = ArgumentSpec(valueName: valueName, help: help, isOptional: optional, completion: parser.completion)
        self.parser = parser
    }
}
