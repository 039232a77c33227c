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
    /// `blectl __manual`, run by `make man`: print the man page read on stdin with its
    /// generated blocks rewritten from the declarations (``ManualPage``), and exit 0.
    case manualPage
}

/// What the completion scripts ask blectl for when the user presses Tab.
enum CompletionValueKind: String, Sendable, CaseIterable {
    /// Device addresses BlueZ has (cached, paired or connected), with their names.
    case devices
    /// Adapter names (`hci0`), with their addresses.
    case adapters
}
