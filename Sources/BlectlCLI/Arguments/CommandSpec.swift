/// One command or subcommand: its names, help prose, and the options and arguments it
/// accepts. `ArgumentParser` matches a command line against a tree of these and
/// `HelpFormatter` renders help from the same values.
struct CommandSpec: Sendable {
    /// Canonical kebab-case name, `"get-version"`; the root's is the program name.
    var name: String
    /// Other names that select this subcommand, `["version"]`.
    var aliases: [String] = []
    /// One line for OVERVIEW and the parent's SUBCOMMANDS list, ending with a period.
    var abstract: String
    /// Further paragraphs shown under the overview.
    var discussion: [String] = []
    /// Positional arguments in order.
    var arguments: [ArgumentSpec] = []
    /// This command's own options, in help order. On the root, options marked
    /// `isGlobal` are also accepted by every subcommand.
    var options: [OptionSpec] = []
    /// Sets of long option names that must be given all together or not at all.
    var allOrNoneGroups: [[String]] = []
    /// Whether the ancestors' global options are accepted (and shown) here; `false`
    /// for commands such as `help` where they would mean nothing.
    var inheritsGlobalOptions = true
    /// The subcommands, by their names; each declaration is built when asked for.
    private var entries: [Entry]
    /// Extra sections at the end of the help, such as EXIT STATUS.
    var extraSections: [HelpSection] = []

    /// A subcommand as its parent lists it: its names at once, its whole declaration (options,
    /// help prose) built by `declaration` when asked for. Parsing a command line builds only
    /// the subcommand it names; help and completion scripts build them all.
    struct Entry: Sendable {
        var name: String
        var aliases: [String]
        var declaration: @Sendable () -> CommandSpec

        init(name: String, aliases: [String] = [], declaration: @escaping @Sendable () -> CommandSpec) {
            self.name = name
            self.aliases = aliases
            self.declaration = declaration
        }

        /// An entry for a declaration already built.
        init(_ spec: CommandSpec) {
            self.init(name: spec.name, aliases: spec.aliases) { spec }
        }
    }

    init(name: String, aliases: [String] = [], abstract: String, discussion: [String] = [],
         arguments: [ArgumentSpec] = [], options: [OptionSpec] = [], allOrNoneGroups: [[String]] = [],
         inheritsGlobalOptions: Bool = true, entries: [Entry] = [], extraSections: [HelpSection] = []) {
        self.name = name
        self.aliases = aliases
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.allOrNoneGroups = allOrNoneGroups
        self.inheritsGlobalOptions = inheritsGlobalOptions
        self.entries = entries
        self.extraSections = extraSections
    }

    /// Every subcommand's declaration, in order (all built).
    var subcommands: [CommandSpec] { entries.map { $0.declaration() } }

    /// Whether the command has subcommands (none built).
    var hasSubcommands: Bool { !entries.isEmpty }

    /// The subcommands' canonical names, in order (none built).
    var subcommandNames: [String] { entries.map(\.name) }

    /// The subcommand called `name` or having it as an alias; only that one is built.
    func subcommand(named name: String) -> CommandSpec? {
        entries.first { $0.name == name || $0.aliases.contains(name) }?.declaration()
    }
}

/// A titled two-column list appended to a help page, e.g. EXIT STATUS.
struct HelpSection: Sendable {
    var title: String
    var rows: [(label: String, text: String)]
    /// Column where the text starts; labels longer than this push the text to the next
    /// line.
    var textColumn: Int
}
