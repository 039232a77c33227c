/// Parses blectl's command line.
///
/// - Parameter arguments: the arguments without the program name
///   (`CommandLine.arguments.dropFirst()`).
/// - Returns: `.help` for `-h`/`--help` anywhere before `--`, `help [<subcommand>]`
///   and `<subcommand> --help`; `.version` for `--version` before the subcommand;
///   else `.run` with the typed options. On failure, a `UsageError` naming the
///   offending input and the subcommand concerned: print `renderUsageError(_:)` to
///   stderr and exit 64. Never traps, whatever the input.
func parseCommandLine(_ arguments: [String]) -> Result<Invocation, UsageError> {
    do throws(UsageError) {
        return .success(try invocation(for: arguments))
    } catch {
        return .failure(error)
    }
}

/// The text to print on stderr for a usage error, ending with a newline:
///
///     Error: Unknown option '--frobnicate'
///     Usage: blectl scan [--timeout <seconds>] …
///       See 'blectl scan --help' for more information.
func renderUsageError(_ error: UsageError) -> String {
    let path = Blectl.path(forSubcommand: error.subcommand)
    let helpCommand = path.map(\.name).joined(separator: " ")
    return """
        Error: \(error.message)
        \(HelpFormatter.usage(for: path, prefix: "Usage: "))
          See '\(helpCommand) --help' for more information.

        """
}

extension Blectl {
    /// `[root]` for `nil`, `[root, scan]` for `"scan"`; unknown names give `[root]`.
    static func path(forSubcommand name: String?) -> [CommandSpec] {
        let root = spec
        var path = [root]
        for word in name?.split(separator: " ") ?? [] {
            guard let next = path[path.count - 1].subcommand(named: String(word)) else { return [root] }
            path.append(next)
        }
        return path
    }
}

private func invocation(for arguments: [String]) throws(UsageError) -> Invocation {
    let root = Blectl.spec
    if arguments.first == CompletionsCommand.valuesWord {
        // Asked by a completion script, never by a person: anything unexpected lists nothing.
        guard arguments.count == 2, let kind = CompletionValueKind(rawValue: arguments[1]) else { return .completionScript("") }
        return .completionValues(kind)
    }
    if arguments == [ManualPage.word] { return .manualPage }
    switch try ArgumentParser(root: root).parse(arguments) {
    case .help(let path):
        return .help(HelpFormatter.help(for: path))

    case .parsed(let path, let values):
        // Before any value is converted: `--version` wins over a value that would not.
        if values.contains(OptionSpec.version.long) { return .version }
        guard path.count > 1 else {
            let names = root.subcommandNames.joinedAsList(conjunction: "or")
            throw UsageError("Missing subcommand: expected \(names)")
        }
        let leaf = path[path.count - 1]

        if leaf.name == HelpCommand.configuration.name {
            guard let name = try HelpCommand.parse(values).subcommand else {
                return .help(HelpFormatter.help(for: [root]))
            }
            guard let subcommand = root.subcommand(named: name) else {
                throw UsageError("Unknown subcommand \(name.quotedForMessage)", subcommand: leaf.name)
            }
            return .help(HelpFormatter.help(for: [root, subcommand]))
        }

        if leaf.name == CompletionsCommand.configuration.name {
            let shell = try CompletionsCommand.parse(values).shell
            return .completionScript(CompletionScript.render(for: shell, root: root))
        }

        let global = try Blectl.parse(values).global
        guard let type = Subcommands.type(named: leaf.name) else {
            // Declared in `root` but not registered: a programming error, reported without trapping.
            throw UsageError("Unknown subcommand \(leaf.name.quotedForMessage)")
        }
        return .run(global, Subcommand(try type.parse(values)))
    }
}
