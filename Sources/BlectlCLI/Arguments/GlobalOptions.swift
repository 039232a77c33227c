/// The options accepted before or after any subcommand: the root's (``Blectl``).
struct GlobalOptions: ParsableArguments, Equatable {
    /// `--adapter`: the adapter's name, `hci` then digits (`"hci0"`); `nil` when not
    /// given, leaving the choice of adapter to the caller.
    @Option("adapter", valueName: "adapter",
            help: "Bluetooth adapter to use, like hci0; without it, the first powered adapter.",
            parser: .adapterName, global: true)
    var adapter: String?

    /// `--format`: how results are printed on stdout.
    @Option("format", short: "f", valueName: "format", help: "Output format: \(OutputFormat.choicesList).",
            parser: .choice, global: true)
    var format: OutputFormat = .json

    /// `-v`/`--verbose`, counted: 0 no trace; 1 the D-Bus trace on stderr (calls, replies,
    /// signals acted on); 2 or more, every signal received too.
    @Flag("verbose", short: "v",
          help: "Trace on stderr every D-Bus call blectl makes, its reply and every signal it acts on; twice (-vv), every signal received, dropped ones too.",
          global: true)
    var verbosity = 0

    /// `-q`/`--quiet`: no progress line on stderr, even on a terminal.
    @Flag("quiet", short: "q", help: "No progress line on stderr when it is a terminal.", global: true)
    var quiet = false

    init() {}

    init(adapter: String? = nil, format: OutputFormat = .json, verbosity: Int = 0, quiet: Bool = false) {
        self.adapter = adapter
        self.format = format
        self.verbosity = verbosity
        self.quiet = quiet
    }
}

/// How results are printed on stdout.
enum OutputFormat: String, Sendable, CaseIterable {
    /// One JSON object per result; streams are JSON Lines, one object per line.
    case json
    /// Human-readable lines.
    case text
}
