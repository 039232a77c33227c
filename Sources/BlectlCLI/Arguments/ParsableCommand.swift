/// A command: its names and help prose (``configuration``) and its arguments and options
/// (its properties, as ``ParsableArguments``). ``spec`` puts the two together for the parser,
/// the help, the completion scripts and the man page.
protocol ParsableCommand: ParsableArguments {
    static var configuration: CommandConfiguration { get }
}

/// A command's names, help prose and subcommands: what is not an argument or an option.
struct CommandConfiguration: Sendable {
    /// Canonical kebab-case name, `"get-version"`; the root's is the program name.
    var name: String
    /// Other names that select the subcommand, `["version"]`.
    var aliases: [String] = []
    /// One line for OVERVIEW and the parent's SUBCOMMANDS list, ending with a period.
    var abstract: String
    /// Further paragraphs shown under the overview.
    var discussion: [String] = []
    /// Whether the ancestors' global options are accepted (and shown) here; `false` for
    /// commands such as `help` where they would mean nothing.
    var inheritsGlobalOptions = true
    /// Whether the command takes `--version` (the root).
    var showsVersion = false
    /// The subcommands, in the order help lists them.
    var subcommands: [any ParsableCommand.Type] = []
    /// Extra sections at the end of the help, such as EXIT STATUS.
    var extraSections: [HelpSection] = []
}

extension ParsableCommand {
    /// The command as the parser and the help see it. Each subcommand's is built only when
    /// asked for (``CommandSpec/Entry``): a command line builds the one it names.
    static var spec: CommandSpec {
        let configuration = configuration
        let declared = declarations
        return CommandSpec(
            name: configuration.name, aliases: configuration.aliases, abstract: configuration.abstract,
            discussion: configuration.discussion, arguments: declared.arguments,
            options: declared.options + (configuration.showsVersion ? [.version] : []),
            allOrNoneGroups: declared.allOrNoneGroups, inheritsGlobalOptions: configuration.inheritsGlobalOptions,
            entries: configuration.subcommands.map { $0.entry }, extraSections: configuration.extraSections
        )
    }

    /// The command as its parent lists it: its names now, its ``spec`` when asked for.
    static var entry: CommandSpec.Entry {
        let configuration = configuration
        return CommandSpec.Entry(name: configuration.name, aliases: configuration.aliases) { spec }
    }
}
