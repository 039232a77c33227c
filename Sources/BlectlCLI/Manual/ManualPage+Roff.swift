/// What the generated blocks of the man page hold, in roff (man macros), rendered from the
/// declarations as the help is: the SYNOPSIS entry and the section heading of each command,
/// and the tagged paragraph (`.TP`) of each argument and option, its help text and default.
extension ManualPage {
    // MARK: - SYNOPSIS

    /// `.SY blectl … .YS` for `command`: the global options spelled out (`spellsGlobals`, the
    /// first subcommand's entry) or `[global-options]`, then the name, arguments and options.
    static func synopsis(of command: CommandSpec, root: CommandSpec, spellsGlobals: Bool) -> [String] {
        var lines = [".SY \(root.name)"]
        if command.inheritsGlobalOptions {
            lines += spellsGlobals ? root.options.filter(\.isGlobal).flatMap { synopsisLines(for: [$0]) } : [".RI [ global-options ]"]
        }
        lines.append(".B \(roff(command.name))")
        for argument in command.arguments {
            if case .choices(let words) = argument.completion {
                lines.append(".BR " + words.map(roff).joined(separator: " | "))
            } else {
                let name = roff(argument.valueName)
                if argument.isRepeating {
                    lines.append(argument.isOptional ? ".RI [ \(name) \" ...\" ]" : ".IR \(name) \" ...\"")
                } else {
                    lines.append(argument.isOptional ? ".RI [ \(name) ]" : ".I \(name)")
                }
            }
        }
        for unit in usageUnits(of: command) { lines += synopsisLines(for: unit) }
        return lines + [".YS"]
    }

    /// The root's own entries: one per option of its own (`--version`), and `-h|--help`.
    static func rootSynopsis(of root: CommandSpec) -> [String] {
        root.options.filter { !$0.isGlobal }.flatMap { [".SY \(root.name)", ".B \(roff($0.displayName))", ".YS"] }
            + [".SY \(root.name)", ".B \\-h\\c", "|\\c", ".B \\-\\-help", ".YS"]
    }

    /// One option, or an all-or-none group of them, as synopsis lines: `.RB [ \-\-timeout`,
    /// `.IR seconds ]`; a required option without brackets.
    private static func synopsisLines(for unit: [OptionSpec]) -> [String] {
        let bracketed = unit.count > 1 || !unit[0].isRequired
        var lines: [String] = []
        for (index, option) in unit.enumerated() {
            let open = bracketed && index == 0 ? "[ " : ""
            let close = bracketed && index == unit.count - 1 ? (option.isRepeatable ? " \" .\\|.\\|.]\"" : " ]") : ""
            let name = roff(option.displayName)
            switch option.kind {
            case .flag:
                lines.append(open.isEmpty && close.isEmpty ? ".B \(name)" : ".RB \(open)\(name)\(close)")
            case .value(let valueName):
                lines.append(open.isEmpty ? ".B \(name)" : ".RB \(open)\(name)")
                lines.append(close.isEmpty ? ".I \(roff(valueName))" : ".IR \(roff(valueName))\(close)")
            }
        }
        return lines
    }

    // MARK: - COMMANDS

    /// `.SS "read \fIaddress\fP \fIcharacteristic\fP [\-\-service \fIuuid\fP] …"`.
    static func heading(of command: CommandSpec) -> [String] {
        var words = [roff(command.name)]
        for argument in command.arguments {
            if case .choices(let choices) = argument.completion {
                words.append(choices.map(roff).joined(separator: "|"))
            } else {
                let word = "\\fI\(roff(argument.valueName))\\fP"
                let repeated = argument.isRepeating ? word + " ..." : word
                words.append(argument.isOptional ? "[\(repeated)]" : repeated)
            }
        }
        for unit in usageUnits(of: command) {
            let text = unit.map { option -> String in
                var word = roff(option.displayName)
                if case .value(let valueName) = option.kind { word += " \\fI\(roff(valueName))\\fP" }
                return word + (option.isRepeatable ? " ..." : "")
            }.joined(separator: " ")
            words.append(unit.count > 1 || !unit[0].isRequired ? "[\(text)]" : text)
        }
        return [".SS \"\(words.joined(separator: " "))\""]
    }

    /// `.TP`, `.I address`, the help text.
    static func item(for argument: ArgumentSpec) -> [String] {
        [".TP", ".I \(roff(argument.valueName))"] + text(argument.help)
    }

    /// `.TP`, `.BR \-t ", " \-\-timeout " \fIseconds\fP"`, the help text, `(default: 10)`.
    static func item(for option: OptionSpec) -> [String] {
        let long = roff(option.displayName)
        let label: String
        switch (option.short, option.kind) {
        case (let short?, .value(let valueName)): label = ".BR \\-\(short) \", \" \(long) \" \\fI\(roff(valueName))\\fP\""
        case (nil, .value(let valueName)): label = ".BI \(long) \" \(roff(valueName))\""
        case (let short?, .flag): label = ".BR \\-\(short) \", \" \(long)"
        case (nil, .flag): label = ".B \(long)"
        }
        return [".TP", label] + text(option.help) + (option.defaultDescription.map { [roffText("(default: \($0))")] } ?? [])
    }

    // MARK: - Text

    /// The options as the usage line shows them (the command's own, none of its ancestors'):
    /// one unit per option, an all-or-none group as one unit.
    private static func usageUnits(of command: CommandSpec) -> [[OptionSpec]] {
        var units: [[OptionSpec]] = []
        var grouped: Set<String> = []
        for option in command.options where !grouped.contains(option.long) {
            if let group = command.allOrNoneGroups.first(where: { $0.contains(option.long) }) {
                grouped.formUnion(group)
                units.append(group.compactMap { long in command.options.first { $0.long == long } })
            } else {
                units.append([option])
            }
        }
        return units
    }

    /// Help text as roff text lines: a sentence to a line, each at most ``lineLimit`` bytes
    /// where a space allows (mandoc's style), escaped.
    static func text(_ help: String) -> [String] {
        sentences(of: help).flatMap { wrap(roffText($0)) }
    }

    /// `text` escaped, its dashes minus signs in the words typed as they are (`--file`, `-vv`,
    /// `-` alone, `-127`) and hyphens elsewhere (`16-bit`, `UTF-8`).
    private static func roffText(_ text: String) -> String {
        text.split(separator: " ", omittingEmptySubsequences: false).map { word in
            word.drop { "([\"'".contains($0) }.first == "-" ? roff(String(word)) : String(word).replacing("\\", with: "\\e")
        }.joined(separator: " ")
    }

    /// The longest text line mandoc's style check lets through.
    static let lineLimit = 80

    /// `help` cut after each `.`, `!` or `?` followed by a space and an upper-case letter.
    private static func sentences(of help: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        let words = help.split(separator: " ", omittingEmptySubsequences: false)
        for (index, word) in words.enumerated() {
            current += current.isEmpty ? String(word) : " " + word
            let next = index + 1 < words.count ? words[index + 1].first : nil
            if let last = word.last, ".!?".contains(last), let next, next.isUppercase {
                sentences.append(current)
                current = ""
            }
        }
        if !current.isEmpty { sentences.append(current) }
        return sentences
    }

    /// `line` broken at spaces into lines of at most ``lineLimit`` bytes (a word longer than
    /// that keeps a line of its own); never so that a line starts with `.` or `'`, which roff
    /// would take for a request.
    private static func wrap(_ line: String) -> [String] {
        var lines: [String] = []
        var current = ""
        for word in line.split(separator: " ") {
            let joined = current.isEmpty ? String(word) : current + " " + word
            if joined.utf8.count > lineLimit, !current.isEmpty, !".'".contains(word.first!) {
                lines.append(current)
                current = String(word)
            } else {
                current = joined
            }
        }
        lines.append(current)
        return lines.map { ".'".contains($0.first ?? " ") ? "\\&" + $0 : $0 }
    }

    /// `text` with roff's special characters escaped: `\` as `\e`, `-` as `\-` (a minus, as
    /// options are typed, not a hyphen).
    static func roff(_ text: String) -> String {
        text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
    }
}
