/// A named option without a value, `--updates`, declared once where its value is kept:
///
///     @Flag("updates", help: "Print a line for every advertisement update, …")
///     var updates = false
///
/// A `Bool` flag is true when given (once; twice is a usage error); an `Int` flag counts how
/// many times it was given (`-vv`: 2) and may be repeated.
@propertyWrapper
struct Flag<Value: Sendable>: Sendable {
    var wrappedValue: Value

    /// `Bool = false`: given or not.
    init(wrappedValue: Bool, _ declaration: FlagDeclaration) where Value == Bool {
        self.wrappedValue = ArgumentScope.current.map { $0.count(of: declaration, spec: declaration.spec(repeatable: false)) > 0 } ?? wrappedValue
    }

    /// `Int = 0`: how many times given.
    init(wrappedValue: Int, _ declaration: FlagDeclaration) where Value == Int {
        self.wrappedValue = ArgumentScope.current?.count(of: declaration, spec: declaration.spec(repeatable: true)) ?? wrappedValue
    }
}

extension Flag {
    /// - Parameters:
    ///   - long: the name without dashes, `"updates"`.
    ///   - short: a one-letter alias, `q` for `-q`; `nil` for none.
    ///   - help: one or more sentences.
    ///   - global: on the root only: accepted before and after the subcommand.
    init(wrappedValue: Bool, _ long: String, short: Character? = nil, help: String, global: Bool = false) where Value == Bool {
        self.init(wrappedValue: wrappedValue, FlagDeclaration(long, short: short, help: help, global: global))
    }

    init(wrappedValue: Int, _ long: String, short: Character? = nil, help: String, global: Bool = false) where Value == Int {
        self.init(wrappedValue: wrappedValue, FlagDeclaration(long, short: short, help: help, global: global))
    }
}

extension Flag: Equatable where Value: Equatable {}

/// A flag as several commands declare it alike, `@Flag(.text)`.
struct FlagDeclaration: Sendable {
    var long: String
    var short: Character?
    var help: String
    var isGlobal: Bool

    /// The parameters as ``Flag``'s.
    init(_ long: String, short: Character? = nil, help: String, global: Bool = false) {
        self.long = long
        self.short = short
        self.help = help
        self.isGlobal = global
    }

    func spec(repeatable: Bool) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .flag, help: help, defaultDescription: nil,
                   isRepeatable: repeatable, isGlobal: isGlobal)
    }
}
