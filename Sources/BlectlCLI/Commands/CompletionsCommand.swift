/// `blectl completions <shell>`: the completion script for the shell, generated from the
/// declarations (``CompletionScript``); ``parseCommandLine(_:)`` answers it.
struct CompletionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        name: "completions",
        abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: [
            "Completes subcommands, options, --format's values, adapter names and the addresses of the devices BlueZ knows (with their names where the shell shows descriptions), asking bluetoothd when Tab is pressed (within half a second; nothing is offered without it). make install puts the three scripts where the shells look; the man page says where to put one by hand.",
        ],
        inheritsGlobalOptions: false
    )

    /// The hidden first word with which the scripts ask for BlueZ's values.
    static let valuesWord = "__complete"

    @Argument("shell", help: "The shell: \(Shell.choicesList).", parser: .choice)
    var shell: Shell
}
