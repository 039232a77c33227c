/// Matches a command line against a tree of `CommandSpec`s, in the manner of
/// swift-argument-parser:
///
/// - `--flag`; `--option value` and `--option=value`; short names `-t 5` and `-t5`,
///   flags together in one word (`-qv`), a value-taking letter last (`-qt5`); a
///   repeatable flag counts (`-vv`, `-v -v`);
///   an option's value may start
///   with `-` only when it looks like a negative number (`--rssi-min -70`), otherwise
///   write `--name=-x`;
/// - repeatable options collect every value; any other option given twice is an error;
/// - a required option missing is an error, as a missing argument is;
/// - the first positional word at a command with subcommands selects one (by name or
///   alias); later positionals fill the leaf command's arguments in order;
/// - options of the root marked global are accepted before and after the subcommand;
/// - `--` ends options: everything after it is positional;
/// - `-h`/`--help` anywhere before `--` asks for help about the command reached so
///   far, and wins over every error on the line.
///
/// Values are only split into strings here; typed conversion happens when the command's
/// type is parsed from them (``ParsableArguments/parse(_:)``).
struct ArgumentParser: Sendable {
    enum Outcome: Sendable {
        /// Help was asked for; `path` runs from the root to the command concerned.
        case help(path: [CommandSpec])
        /// The line matched; `path` runs from the root to the leaf command.
        case parsed(path: [CommandSpec], values: ParsedValues)
    }

    let root: CommandSpec

    /// - Parameter arguments: the command line without the program name.
    /// - Throws: `UsageError` for the first problem on the line (unknown option or
    ///   subcommand, missing value, option repeated, flag given a value), else for a
    ///   missing or unexpected positional argument or an incomplete all-or-none group.
    func parse(_ arguments: [String]) throws(UsageError) -> Outcome {
        var path = [root]
        var values = ParsedValues()
        var positionals: [String] = []
        var firstError: UsageError?
        var helpRequested = false
        var optionsEnded = false
        var index = arguments.startIndex

        func record(_ message: String) {
            if firstError == nil {
                firstError = UsageError(message, subcommand: Self.subcommandName(of: path))
            }
        }

        /// Records `spec` as given, with its value inline (`--timeout=5`, `-t5`), from the
        /// next word, or missing.
        func take(_ spec: OptionSpec, inlineValue: String?) {
            if spec.kind == .flag, inlineValue != nil {
                record("Option \(spec.displayName.quotedForMessage) takes no value")
                return
            }
            if spec == .help {
                helpRequested = true
                return
            }
            if values.contains(spec.long) && !spec.isRepeatable {
                record("Option \(spec.displayName.quotedForMessage) cannot be repeated")
            }
            switch spec.kind {
            case .flag:
                values.flags.insert(spec.long)
                values.flagCounts[spec.long, default: 0] += 1
            case .value:
                if let inlineValue {
                    values.optionValues[spec.long, default: []].append(inlineValue)
                } else if index < arguments.endIndex, !Self.isOptionLike(arguments[index]) {
                    values.optionValues[spec.long, default: []].append(arguments[index])
                    index += 1
                } else {
                    record("Missing value for \(spec.displayName.quotedForMessage)")
                }
            }
        }

        while index < arguments.endIndex {
            let token = arguments[index]
            index += 1

            if !optionsEnded && token == "--" {
                optionsEnded = true
                continue
            }

            if !optionsEnded && Self.isOptionLike(token) {
                if token.hasPrefix("--") {
                    let (name, inlineValue) = Self.splitOption(token)
                    guard let spec = Self.option(named: name, along: path) else {
                        record("Unknown option \(name.quotedForMessage)")
                        continue
                    }
                    take(spec, inlineValue: inlineValue)
                    continue
                }
                // `-t5`, `-t 5`, and flags together (`-h`): letters in order; the first one
                // that takes a value takes the rest of the word, or else the next word.
                var letters = token.dropFirst()
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    guard let spec = Self.option(named: "-\(letter)", along: path) else {
                        record("Unknown option \("-\(letter)".quotedForMessage)")
                        break
                    }
                    if case .value = spec.kind, !letters.isEmpty {
                        take(spec, inlineValue: String(letters))
                        break
                    }
                    take(spec, inlineValue: nil)
                }
                continue
            }

            if let current = path.last, current.hasSubcommands {
                if let subcommand = current.subcommand(named: token) {
                    path.append(subcommand)
                } else {
                    record("Unknown subcommand \(token.quotedForMessage)")
                }
                continue
            }
            positionals.append(token)
        }

        if helpRequested { return .help(path: path) }
        if let firstError { throw firstError }

        let leaf = path[path.count - 1]
        let subcommand = Self.subcommandName(of: path)
        values.subcommand = subcommand
        try Self.assign(positionals, to: leaf.arguments, in: &values)
        if let missing = leaf.options.first(where: { $0.isRequired && !values.contains($0.long) }) {
            throw UsageError("Missing expected argument \(missing.usageWord.quotedForMessage)", subcommand: subcommand)
        }
        for group in leaf.allOrNoneGroups {
            let missing = group.filter { !values.contains($0) }
            if missing.count != 0 && missing.count != group.count {
                let quote = { (long: String) in ("--" + long).quotedForMessage }
                throw UsageError(
                    "Missing \(missing.map(quote).joinedAsList()): give all of \(group.map(quote).joinedAsList()), or none",
                    subcommand: subcommand
                )
            }
        }
        return .parsed(path: path, values: values)
    }

    /// Gives the positional words to `arguments` in order. A repeating argument takes the
    /// words the arguments after it leave (at least one, unless it is optional or the option
    /// that replaces it is given); when too few words are given, it takes its minimum first
    /// and the arguments after it go missing, as a single argument would.
    /// - Throws: `UsageError` for the first argument missing, or the first word left over.
    private static func assign(_ positionals: [String], to arguments: [ArgumentSpec], in values: inout ParsedValues) throws(UsageError) {
        let subcommand = values.subcommand
        var next = positionals.startIndex
        for (position, argument) in arguments.enumerated() {
            let replaced = argument.replacedBy.map { values.contains($0) } ?? false
            if argument.isRepeating {
                let minimum = argument.isOptional || replaced ? 0 : 1
                let reserved = arguments[(position + 1)...].filter { !$0.isOptional }.count
                let taken = max(min(minimum, positionals.endIndex - next), positionals.endIndex - next - reserved)
                if taken < minimum {
                    throw UsageError("Missing expected argument \(argument.displayName.quotedForMessage)", subcommand: subcommand)
                }
                values.repeatedArguments[argument.valueName] = Array(positionals[next..<(next + taken)])
                next += taken
            } else if next < positionals.endIndex {
                values.arguments[argument.valueName] = positionals[next]
                next += 1
            } else if !argument.isOptional && !replaced {
                throw UsageError("Missing expected argument \(argument.displayName.quotedForMessage)", subcommand: subcommand)
            }
        }
        if next < positionals.endIndex {
            throw UsageError("Unexpected argument \(positionals[next].quotedForMessage)", subcommand: subcommand)
        }
    }

    /// The options accepted at the end of `path`: the leaf's own, the global ones of
    /// its ancestors (unless the leaf opts out), and `-h`/`--help`.
    static func acceptedOptions(along path: [CommandSpec]) -> [OptionSpec] {
        let leaf = path[path.count - 1]
        let inherited = leaf.inheritsGlobalOptions ? path.dropLast().flatMap { $0.options.filter(\.isGlobal) } : []
        return leaf.options + inherited + [.help]
    }

    /// `"--timeout"` or `"-h"` looked up among the accepted options.
    private static func option(named name: String, along path: [CommandSpec]) -> OptionSpec? {
        let accepted = acceptedOptions(along: path)
        if name.hasPrefix("--") {
            let long = name.dropFirst(2)
            return accepted.first { $0.long == long }
        }
        guard name.count == 2, let letter = name.last else { return nil }
        return accepted.first { $0.short == letter }
    }

    /// `--name=value` → (`--name`, `value`); `--name` → (`--name`, nil).
    private static func splitOption(_ token: String) -> (name: String, value: String?) {
        guard let equals = token.firstIndex(of: "=") else { return (token, nil) }
        return (String(token[..<equals]), String(token[token.index(after: equals)...]))
    }

    /// Starts with `-`, is not `-` alone and does not look like a negative number
    /// (`-70`, `-.5`), so `--rssi-min -70` passes -70 as the value.
    static func isOptionLike(_ token: String) -> Bool {
        let utf8 = token.utf8
        guard utf8.first == UInt8(ascii: "-"), utf8.count > 1 else { return false }
        let isDigit = { (byte: UInt8?) in byte.map { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } ?? false }
        let second = utf8.dropFirst().first
        let third = utf8.dropFirst(2).first
        let looksNegative = isDigit(second) || (second == UInt8(ascii: ".") && isDigit(third))
        return !looksNegative
    }

    /// `"scan"` for `[root, scan]`; `nil` for `[root]`.
    static func subcommandName(of path: [CommandSpec]) -> String? {
        // Concatenated in a loop: the generic `joined(separator:)` on a slice costs a run-time
        // conformance lookup at every start-up (BENCHMARKS.md, "Mechanisms kept for speed").
        guard path.count > 1 else { return nil }
        var name = path[1].name
        for command in path[2...] { name += " " + command.name }
        return name
    }
}
