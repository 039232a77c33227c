import BlueZKit

/// blectl's command line, declared once: every option, argument and subcommand with
/// its help text, parser and default. `ArgumentParser` matches against `root`,
/// `HelpFormatter` renders help from it, and the `…Options(from:)` functions read
/// typed values through the same declarations.
enum BlectlCommands {
    /// Options of the root, accepted before or after any subcommand (but `--version`
    /// only before it).
    enum Global {
        static let adapter = Option<String>(
            "adapter", valueName: "adapter",
            help: "Bluetooth adapter to use, like hci0; without it, the first powered adapter.",
            parser: .adapterName, global: true
        )
        static let format = Option<OutputFormat>(
            "format", short: "f", valueName: "format",
            help: "Output format: \(OutputFormat.choicesList).",
            parser: .choice, default: GlobalOptions.defaultFormat, global: true
        )
        static let verbose = Flag(
            "verbose", short: "v",
            help: "Trace on stderr every D-Bus call blectl makes, its reply and every signal it acts on; twice (-vv), every signal received, dropped ones too.",
            repeatable: true, global: true
        )
        static let quiet = Flag(
            "quiet", short: "q",
            help: "No progress line on stderr when it is a terminal.",
            global: true
        )
        static let version = Flag("version", help: "Show the version.")

        static func options(from values: ParsedValues) throws(UsageError) -> GlobalOptions {
            GlobalOptions(adapter: try values.value(of: adapter), format: try values.requiredValue(of: format),
                          verbosity: values.count(of: verbose), quiet: values.isSet(quiet))
        }
    }

    enum Help {
        static let subcommand = Argument<String>(
            "subcommand", help: "The subcommand to describe.", parser: .verbatim, optional: true
        )
        static let commandName = "help"
        static let command = CommandSpec(
            name: commandName,
            abstract: "Show subcommand help information.",
            arguments: [subcommand.spec],
            inheritsGlobalOptions: false
        )
    }

    enum Completions {
        static let shell = Argument<Shell>(
            "shell", help: "The shell: \(Shell.choicesList).", parser: .choice
        )
        static let commandName = "completions"
        static let command = CommandSpec(
            name: commandName,
            abstract: "Print the shell completion script for bash, zsh or fish.",
            discussion: [
                "Completes subcommands, options, --format's values, adapter names and the addresses of the devices BlueZ knows (with their names where the shell shows descriptions), asking bluetoothd when Tab is pressed (within half a second; nothing is offered without it). make install puts the three scripts where the shells look; the man page says where to put one by hand.",
            ],
            arguments: [shell.spec],
            inheritsGlobalOptions: false
        )
        /// The hidden first word with which the scripts ask for BlueZ's values.
        static let valuesWord = "__complete"
    }

    /// Exit statuses, shown in the top-level help.
    static let exitStatus = HelpSection(
        title: "EXIT STATUS",
        rows: ExitStatus.allCases.map { (String($0.rawValue), $0.summary) }
            + [("129", "Interrupted by SIGHUP."), ("130", "Interrupted by SIGINT."),
               ("141", "Standard output's reader went away (SIGPIPE)."), ("143", "Interrupted by SIGTERM.")],
        textColumn: 8
    )

    static let root = CommandSpec(
        name: "blectl",
        abstract: "Probe Bluetooth LE devices through BlueZ.",
        options: [Global.adapter.spec, Global.format.spec, Global.verbose.spec, Global.quiet.spec, Global.version.spec],
        entries: Subcommands.entries + [
            CommandSpec.Entry(name: Completions.commandName) { Completions.command },
            CommandSpec.Entry(name: Help.commandName) { Help.command },
        ],
        extraSections: [exitStatus]
    )

    /// `[root]` for `nil`, `[root, scan]` for `"scan"`; unknown names give `[root]`.
    static func path(forSubcommand name: String?) -> [CommandSpec] {
        var path = [root]
        for word in name?.split(separator: " ") ?? [] {
            guard let next = path[path.count - 1].subcommand(named: String(word)) else { return [root] }
            path.append(next)
        }
        return path
    }
}
