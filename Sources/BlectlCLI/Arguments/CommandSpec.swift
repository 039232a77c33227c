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
    var subcommands: [CommandSpec] = []
    /// Extra sections at the end of the help, such as EXIT STATUS.
    var extraSections: [HelpSection] = []

    /// The subcommand called `name` or having it as an alias.
    func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name || $0.aliases.contains(name) }
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
