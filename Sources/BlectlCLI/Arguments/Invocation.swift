import BlueZKit

/// What a blectl command line asks for, as produced by `parseCommandLine(_:)`.
enum Invocation: Sendable, Equatable {
    /// Print this help text to stdout as is (it ends with a newline) and exit 0.
    case help(String)
    /// Print the version to stdout and exit 0.
    case version
    /// Run a subcommand.
    case run(GlobalOptions, Subcommand)
    /// `blectl completions <shell>`: print this script to stdout as is and exit 0.
    case completionScript(String)
    /// `blectl __complete <devices|adapters>`, run by the completion scripts: print what
    /// BlueZ has, one `value<TAB>description` line each, within a short limit, and exit 0
    /// (nothing on any failure: a completion never shows an error).
    case completionValues(CompletionValueKind)
}

/// What the completion scripts ask blectl for when the user presses Tab.
enum CompletionValueKind: String, Sendable, CaseIterable {
    /// Device addresses BlueZ has (cached, paired or connected), with their names.
    case devices
    /// Adapter names (`hci0`), with their addresses.
    case adapters
}

/// Options accepted before or after any subcommand.
struct GlobalOptions: Sendable, Equatable {
    /// The format used when `--format` is not given.
    static let defaultFormat = OutputFormat.json

    /// `--adapter`: the adapter's name, `hci` then digits (`"hci0"`); `nil` when not
    /// given, leaving the choice of adapter to the caller.
    var adapter: String?
    /// `--format`: how results are printed on stdout.
    var format: OutputFormat
    /// `-v`/`--verbose`, counted: 0 no trace; 1 the D-Bus trace on stderr (calls, replies,
    /// signals acted on); 2 or more, every signal received too.
    var verbosity: Int
    /// `-q`/`--quiet`: no progress line on stderr, even on a terminal.
    var quiet: Bool

    init(adapter: String? = nil, format: OutputFormat = GlobalOptions.defaultFormat, verbosity: Int = 0, quiet: Bool = false) {
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
