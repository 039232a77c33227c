/// `blectl help [<subcommand>]`: the same text as `blectl <subcommand> --help`, or the
/// top-level help without an argument (``parseCommandLine(_:)`` answers it).
struct HelpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        name: "help",
        abstract: "Show subcommand help information.",
        inheritsGlobalOptions: false
    )

    @Argument("subcommand", help: "The subcommand to describe.", parser: .verbatim)
    var subcommand: String?
}
