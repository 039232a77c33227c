/// The shells `blectl completions` writes a script for.
enum Shell: String, Sendable, CaseIterable {
    case bash, zsh, fish
}

/// The completion scripts, generated from the command declarations (`Blectl.spec`),
/// so every subcommand, alias, option, short name and value kind the parser accepts is what
/// the shells offer. Each script holds the declarations as data (per subcommand: options,
/// the options that take a value, what each value and positional argument completes to)
/// and a small engine in the shell's own language that walks the words typed so far the
/// way `ArgumentParser` does: global options before the subcommand, an option's value in
/// the next word, `--` ending options. Values from BlueZ come from `blectl __complete`.
enum CompletionScript {
    static func render(for shell: Shell, root: CommandSpec) -> String {
        let model = Model(root: root)
        switch shell {
        case .bash: return bash(model)
        case .zsh: return zsh(model)
        case .fish: return fish(model)
        }
    }

    /// The declarations, flattened for the scripts.
    struct Model {
        struct Command {
            /// Canonical name first, then aliases.
            var names: [String]
            var abstract: String
            /// Every option accepted there (its own, the inherited global ones, help).
            var options: [OptionSpec]
            var arguments: [ArgumentSpec]
        }

        var program: String
        var rootOptions: [OptionSpec]
        var commands: [Command]

        init(root: CommandSpec) {
            program = root.name
            rootOptions = ArgumentParser.acceptedOptions(along: [root])
            commands = root.subcommands.map { sub in
                Command(names: [sub.name] + sub.aliases, abstract: sub.abstract,
                        options: ArgumentParser.acceptedOptions(along: [root, sub]), arguments: sub.arguments)
            }
        }

        /// Help's `<subcommand>` completes to the subcommands, named by their declaration.
        func argumentKind(_ argument: ArgumentSpec, of command: Command) -> String {
            if command.names.first == "help" && argument.valueName == "subcommand" { return "subcommands" }
            return Self.kind(argument.completion)
        }

        /// `none`, `files`, `devices`, `adapters` or `choices:a b`: how the engines name a kind.
        static func kind(_ completion: ValueCompletion) -> String {
            switch completion {
            case .none: return "none"
            case .files: return "files"
            case .bluez(let values): return values.rawValue
            case .choices(let words): return "choices:" + words.joined(separator: " ")
            }
        }
    }

    // MARK: - Shared by the sh-like scripts (bash, zsh)

    /// `        'scan --adapter'|'scan'…) kind='adapters';;`: the value kind of every value-taking
    /// option with one, keyed by "subcommand option" (the root's by " option").
    static func shOptionKindCases(_ model: Model) -> [String] {
        let commands = [("", model.rootOptions)] + model.commands.map { ($0.names[0], $0.options) }
        return commands.flatMap { sub, options in
            options.filter { $0.kind != .flag && Model.kind($0.completion) != "none" }.map { option in
                let keys = names(option).map { shQuoted("\(sub) \($0)") }.joined(separator: "|")
                return "        \(keys)) kind=\(shQuoted(Model.kind(option.completion)));;"
            }
        }
    }

    /// `        'version') sub='get-version';;`: each alias to its canonical name.
    static func shAliasCases(_ model: Model) -> [String] {
        model.commands.filter { $0.names.count > 1 }.map { command in
            "        \(command.names.dropFirst().map(shQuoted).joined(separator: "|"))) sub=\(shQuoted(command.names[0]));;"
        }
    }

    /// `" --timeout -t --adapter "`: the names of the options that take a value, padded with
    /// spaces so that `*" $w "*` matches a whole word.
    static func valueOptionWords(_ options: [OptionSpec]) -> String {
        " " + options.filter { $0.kind != .flag }.flatMap(names).joined(separator: " ") + " "
    }

    // MARK: - Quoting

    /// `'text'` for sh-like shells (bash, zsh): `'` becomes `'\''`.
    static func shQuoted(_ text: String) -> String {
        "'" + text.replacing("'", with: #"'\''"#) + "'"
    }

    /// `'text'` for fish: `\` and `'` escaped.
    static func fishQuoted(_ text: String) -> String {
        "'" + text.replacing(#"\"#, with: #"\\"#).replacing("'", with: #"\'"#) + "'"
    }

    /// The first sentence of a help text, for a description column.
    static func summary(_ help: String) -> String {
        var text = help
        if let end = help.firstRange(of: ". ") { text = String(help[..<end.lowerBound]) }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// `--timeout`, `-t`: every name of an option as typed.
    static func names(_ option: OptionSpec) -> [String] {
        [option.displayName] + (option.short.map { ["-\($0)"] } ?? [])
    }
}
