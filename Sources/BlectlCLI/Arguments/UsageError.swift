/// A command line blectl cannot run: an unknown option, a missing or malformed value,
/// an unexpected argument, an unknown subcommand.
///
/// A usage error is not a runtime error: the caller prints `renderUsageError(_:)` to
/// stderr and exits with status 64 (EX_USAGE), like swift-argument-parser.
struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One sentence without a final period, quoting the offending input,
    /// e.g. `Unknown option '--frobnicate'`.
    var message: String

    /// The canonical name of the subcommand the error concerns (`"scan"`,
    /// `"get-version"`, never an alias), or `nil` for the top level. Used for the
    /// `See 'blectl scan --help'` hint.
    var subcommand: String?

    /// - Parameters:
    ///   - message: the sentence to show after `Error: `.
    ///   - subcommand: the canonical subcommand name, `nil` for the top level.
    init(_ message: String, subcommand: String? = nil) {
        self.message = message
        self.subcommand = subcommand
    }

    var description: String { message }

    /// The error, naming `subcommand` unless it already names one.
    func concerning(_ subcommand: String?) -> UsageError {
        UsageError(message, subcommand: self.subcommand ?? subcommand)
    }
}
