/// Renders help pages and usage lines from `CommandSpec`s, laid out like
/// swift-argument-parser's (OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS), every
/// line at most `width` columns.
enum HelpFormatter {
    /// Lines stay under 80 columns.
    static let width = 79
    /// Column where option and argument descriptions start.
    static let textColumn = 26

    /// The help page for the last command of `path` (root first), ending in a newline.
    static func help(for path: [CommandSpec]) -> String {
        let command = path[path.count - 1]
        var sections: [[String]] = []

        var overview = wrap(command.abstract, firstPrefix: "OVERVIEW: ", indent: 0)
        for paragraph in command.discussion {
            overview += [""] + wrap(paragraph, firstPrefix: "", indent: 0)
        }
        sections.append(overview)
        sections.append(usageLines(for: path, prefix: "USAGE: "))

        if !command.arguments.isEmpty {
            sections.append(["ARGUMENTS:"] + command.arguments.flatMap {
                row(label: $0.displayName, text: $0.help, column: textColumn)
            })
        }

        let options = ArgumentParser.acceptedOptions(along: path)
        sections.append(["OPTIONS:"] + options.flatMap { option in
            let text = option.help + (option.defaultDescription.map { " (default: \($0))" } ?? "")
            return row(label: option.helpLabel, text: text, column: textColumn)
        })

        if command.hasSubcommands {
            var lines = ["SUBCOMMANDS:"]
            for subcommand in command.subcommands {
                let label = ([subcommand.name] + subcommand.aliases).joined(separator: ", ")
                lines += row(label: label, text: subcommand.abstract, column: textColumn)
            }
            let programPath = path.map(\.name).joined(separator: " ")
            lines += ["", "  See '\(programPath) help <subcommand>' for detailed help."]
            sections.append(lines)
        }

        for extra in command.extraSections {
            sections.append([extra.title + ":"] + extra.rows.flatMap {
                row(label: $0.label, text: $0.text, column: extra.textColumn)
            })
        }

        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n") + "\n"
    }

    /// The usage of the last command of `path`, after `prefix` (`"USAGE: "` or
    /// `"Usage: "`), wrapped with continuation lines aligned after the command name.
    /// No trailing newline.
    static func usage(for path: [CommandSpec], prefix: String) -> String {
        usageLines(for: path, prefix: prefix).joined(separator: "\n")
    }

    private static func usageLines(for path: [CommandSpec], prefix: String) -> [String] {
        let command = path[path.count - 1]
        let commandWords = path.map(\.name).joined(separator: " ")

        // Each unit is a list of pieces that are kept together when the unit fits on a
        // line, and broken between pieces only when it cannot fit on any line.
        var units: [[String]] = command.arguments.map { [$0.isOptional ? "[\($0.usageWord)]" : $0.usageWord] }
        var grouped: Set<String> = []
        let options = ArgumentParser.acceptedOptions(along: path).filter { $0 != .help }
        for option in options where !grouped.contains(option.long) {
            // The root's own non-global options (--version) stand alone; leave them out
            // of the usage, like swift-argument-parser does.
            if path.count == 1, !option.isGlobal { continue }
            if let group = command.allOrNoneGroups.first(where: { $0.contains(option.long) }) {
                grouped.formUnion(group)
                var pieces = group.compactMap { long in options.first { $0.long == long }?.usageWord }
                if let first = pieces.first, let last = pieces.last {
                    pieces[0] = "[" + first
                    pieces[pieces.count - 1] = (pieces.count == 1 ? pieces[0] : last) + "]"
                    units.append(pieces)
                }
            } else {
                units.append([option.isRequired ? option.usageWord : "[" + option.usageWord + "]"])
            }
        }
        if command.hasSubcommands { units.append(["<subcommand>"]) }

        let head = prefix + commandWords
        let indent = String(repeating: " ", count: head.count + 1)
        var lines: [String] = []
        var line = head
        func place(_ text: String) {
            if line.count + 1 + text.count <= width || line == head {
                line += " " + text
            } else {
                lines.append(line)
                line = indent + text
            }
        }
        for unit in units {
            let whole = unit.joined(separator: " ")
            if indent.count + whole.count > width {
                unit.forEach(place)
            } else {
                place(whole)
            }
        }
        lines.append(line)
        return lines
    }

    /// `  label      text…` with `text` wrapped at `column`; a label too long for the
    /// gap puts the text on the next line.
    static func row(label: String, text: String, column: Int) -> [String] {
        let labelPart = "  " + label
        let pad = String(repeating: " ", count: column)
        if labelPart.count + 2 <= column {
            let first = labelPart + String(repeating: " ", count: column - labelPart.count)
            return wrap(text, firstPrefix: first, indent: column)
        }
        return [labelPart] + wrap(text, firstPrefix: pad, indent: column)
    }

    /// Word-wraps `text` at `width`: the first line starts with `firstPrefix`, later
    /// ones with `indent` spaces. A word longer than a line gets a line of its own.
    static func wrap(_ text: String, firstPrefix: String, indent: Int) -> [String] {
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = firstPrefix
        var lineHasWord = false
        for word in text.split(separator: " ") {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = pad
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines
    }
}
