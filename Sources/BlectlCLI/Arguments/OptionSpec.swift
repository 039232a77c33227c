/// The untyped description of one named option: what the parser matches and what the
/// help text shows. Built from the declarations (`@Option`, `@Flag`), never by hand,
/// so the default shown in help is the default used.
struct OptionSpec: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// `--updates`: present or not; `--updates=x` is an error.
        case flag
        /// `--timeout <seconds>` or `--timeout=<seconds>`; `valueName` without brackets.
        case value(valueName: String)
    }

    /// The long name without dashes, `"timeout"`; also the key in `ParsedValues`.
    var long: String
    /// A one-letter alias (`h` for `-h`), if any.
    var short: Character?
    var kind: Kind
    /// One or more sentences for the help text, without the default.
    var help: String
    /// The default as shown in help, `"10"` → `(default: 10)`; `nil` shows none.
    var defaultDescription: String?
    /// May be given more than once (`--service 180f --service 180a`); every other
    /// option given twice is a usage error.
    var isRepeatable: Bool = false
    /// Declared on the root command and accepted before or after the subcommand.
    var isGlobal: Bool = false
    /// Must be given (`request`'s `--write`): shown without brackets in the usage line, and
    /// its absence is a usage error.
    var isRequired: Bool = false
    /// What a shell may offer for the value (from the value's parser); `.none` for flags.
    var completion: ValueCompletion = .none
    /// The value is a secret (from the value's parser): no message repeats it.
    var isSecret = false

    /// `"--timeout"`: how errors refer to the option.
    var displayName: String { "--" + long }

    /// `"--timeout <seconds>"`, `"-h, --help"`: the label in the help's OPTIONS list.
    var helpLabel: String {
        let names = (short.map { "-\($0), " } ?? "") + displayName
        switch kind {
        case .flag: return names
        case .value(let valueName): return names + " <\(valueName)>"
        }
    }

    /// `"--timeout <seconds>"`, `"--name <substring> ..."`: the word in a usage line,
    /// before square brackets are added.
    var usageWord: String {
        var word = displayName
        if case .value(let valueName) = kind { word += " <\(valueName)>" }
        if isRepeatable { word += " ..." }
        return word
    }

    /// `-h, --help`, accepted everywhere before `--`.
    static let help = OptionSpec(
        long: "help", short: "h", kind: .flag, help: "Show help information.",
        defaultDescription: nil, isGlobal: true
    )

    /// `--version`, on a root that asks for it (``CommandConfiguration/showsVersion``):
    /// accepted before the subcommand only.
    static let version = OptionSpec(long: "version", kind: .flag, help: "Show the version.", defaultDescription: nil)
}

/// The untyped description of one positional argument, such as `<address>`.
struct ArgumentSpec: Sendable, Equatable {
    /// Name without brackets, `"address"`; shown as `<address>` and the key in
    /// `ParsedValues`.
    var valueName: String
    var help: String
    var isOptional: Bool
    /// What a shell may offer here (from the argument's parser).
    var completion: ValueCompletion = .none
    /// Takes one or more words (`<address> ...`); declared before the arguments that follow
    /// it, which take the last words.
    var isRepeating = false
    /// The long name of an option that stands in for a required argument (`from`: the
    /// addresses come from `--from` instead); nil for none.
    var replacedBy: String?

    /// `"<address>"`.
    var displayName: String { "<\(valueName)>" }

    /// `"<address> ..."` for a repeating argument, else ``displayName``.
    var usageWord: String { isRepeating ? displayName + " ..." : displayName }
}
