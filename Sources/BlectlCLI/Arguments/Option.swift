/// A named option that takes a value, `--timeout <seconds>` or `--timeout=<seconds>`,
/// declared once where its value is kept, as in swift-argument-parser:
///
///     @Option("offset", valueName: "bytes", help: "Start this many bytes into the value, 0 to 65535.",
///             parser: .wholeNumber(in: 0...UInt16.max, unit: "bytes"))
///     var offset: UInt16 = 0
///
/// The parser, the help text, the usage line, the shell completions and the man page's
/// OPTIONS all come from that declaration. The property's type says how the option is given:
/// - `T = value`: may be left out, and is `value` then (help shows `(default: …)`);
/// - `T?`: may be left out, and is nil then;
/// - `T` without a value: must be given (the usage line shows it without brackets);
/// - `[T]`: may be repeated; every value, in order, `[]` when left out.
@propertyWrapper
struct Option<Value: Sendable>: Sendable {
    /// nil only for a required option not parsed or set.
    private var value: Value?

    var wrappedValue: Value {
        get {
            guard let value else { preconditionFailure("a required @Option was read before it was parsed or set") }
            return value
        }
        set { value = newValue }
    }

    /// `T = value`: the value when the option is left out.
    init(wrappedValue: Value, _ declaration: OptionDeclaration<Value>) {
        value = ArgumentScope.current?.value(of: declaration, spec: declaration.spec(default: wrappedValue)) ?? wrappedValue
    }

    /// `T` without a value: required.
    init(_ declaration: OptionDeclaration<Value>) {
        value = ArgumentScope.current?.value(of: declaration, spec: declaration.spec(required: true))
    }

    /// `T?`: nil when left out.
    init<Parsed>(_ declaration: OptionDeclaration<Parsed>) where Value == Parsed? {
        value = .some(ArgumentScope.current?.value(of: declaration, spec: declaration.spec()))
    }

    /// `[T]`: repeatable.
    init<Element>(_ declaration: OptionDeclaration<Element>) where Value == [Element] {
        value = ArgumentScope.current?.values(of: declaration, spec: declaration.spec(repeatable: true)) ?? []
    }
}

extension Option {
    /// - Parameters:
    ///   - long: the name without dashes, `"timeout"`.
    ///   - short: a one-letter alias, `t` for `-t 5` / `-t5`; `nil` for none.
    ///   - valueName: shown as `<seconds>`.
    ///   - help: one or more sentences, without the default.
    ///   - parser: converts and validates the value.
    ///   - global: on the root only: accepted before and after the subcommand.
    init(wrappedValue: Value, _ long: String, short: Character? = nil, valueName: String, help: String,
         parser: ValueParser<Value>, global: Bool = false) {
        self.init(wrappedValue: wrappedValue, OptionDeclaration(long, short: short, valueName: valueName, help: help, parser: parser, global: global))
    }

    init(_ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Value>, global: Bool = false) {
        self.init(OptionDeclaration(long, short: short, valueName: valueName, help: help, parser: parser, global: global))
    }

    init<Parsed>(_ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Parsed>,
                 global: Bool = false) where Value == Parsed? {
        self.init(OptionDeclaration(long, short: short, valueName: valueName, help: help, parser: parser, global: global))
    }

    init<Element>(_ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Element>,
                  global: Bool = false) where Value == [Element] {
        self.init(OptionDeclaration(long, short: short, valueName: valueName, help: help, parser: parser, global: global))
    }
}

extension Option: Equatable where Value: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.value == rhs.value }
}

/// An option as several commands declare it alike, `@Option(.timeout(...))`: its names, help
/// and parser; whether it has a default, may be repeated or must be given follows from the
/// property it is attached to (``Option``).
struct OptionDeclaration<Parsed: Sendable>: Sendable {
    var long: String
    var short: Character?
    var valueName: String
    var help: String
    var parser: ValueParser<Parsed>
    var isGlobal: Bool

    /// The parameters as ``Option``'s.
    init(_ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Parsed>, global: Bool = false) {
        self.long = long
        self.short = short
        self.valueName = valueName
        self.help = help
        self.parser = parser
        self.isGlobal = global
    }

    /// What the parser matches and the help shows.
    func spec(default defaultValue: Parsed? = nil, repeatable: Bool = false, required: Bool = false) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .value(valueName: valueName), help: help,
                   defaultDescription: defaultValue.map(parser.describe), isRepeatable: repeatable, isGlobal: isGlobal,
                   isRequired: required, completion: parser.completion, isSecret: parser.isSecret)
    }
}

extension OptionDeclaration where Parsed == Duration {
    /// `-t, --timeout <seconds>`, which every subcommand takes: the limit for the whole command.
    /// - Parameters:
    ///   - help: what the limit bounds, for the help text.
    ///   - parser: `.seconds` (0 allowed), `.seconds(allowingZero: false)`, or
    ///     `.listeningSeconds(...)` where `inf` is allowed.
    static func timeout(help: String = "Give up after this many seconds; decimals allowed.",
                        parser: ValueParser<Duration> = .seconds) -> Self {
        OptionDeclaration("timeout", short: "t", valueName: "seconds", help: help, parser: parser)
    }
}
