/// The parts of man/blectl.1 made from the declarations, as swift-argument-parser's
/// generate-manual makes a page from the command types: each command's SYNOPSIS entry, its
/// section heading, and an entry per argument and option with its help text and default. The
/// prose around them stays written by hand; each generated part sits between two comments,
///
///     .\" BEGIN GENERATED read --offset
///     .TP
///     .BI \-\-offset " bytes"
///     Start this many bytes into the value, 0 to 65535.
///     (default: 0)
///     .\" END GENERATED
///     An offset past the end of the value is refused by the device: …
///
/// and ``update(_:root:)`` rewrites what is between them. A block is named by what it holds:
/// `synopsis read` (its SYNOPSIS entry; `synopsis blectl`, the root's `--version` and `--help`),
/// `heading read` (its `.SS` line), `read <address>`, `read --offset` (an entry; the global
/// options are `blectl --adapter` …, under GLOBAL OPTIONS).
///
/// `blectl __manual < man/blectl.1` prints the page updated (`make man`); ManPageTests checks
/// that the page is what that prints. blectl makes the page itself, from the declarations
/// compiled into it, as swift-argument-parser's generate-manual plugin runs the tool's hidden
/// `--experimental-dump-help`: no API opened to another target, nothing to build but blectl,
/// and nothing done at start-up unless the word is given.
enum ManualPage {
    /// The hidden first word of the command line that prints the page updated.
    static let word = "__manual"

    static let begin = #".\" BEGIN GENERATED "#
    static let end = #".\" END GENERATED"#

    /// Why a page cannot be updated.
    struct Problem: Error, Equatable, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// `page` with every generated block rewritten from the declarations under `root`, and a
    /// block added for an argument or option that has none, after the one declared before it
    /// and its prose (or before the block of the one declared after it): its own prose, if it
    /// needs any, is then to be written.
    /// - Throws: ``Problem`` for a block without its end, a block named twice or naming nothing
    ///   declared (an option removed: its block and prose go by hand), and a missing block that
    ///   has no neighbour to follow (a new command: its section is written by hand, with its
    ///   heading block).
    static func update(_ page: String, root: CommandSpec) throws(Problem) -> String {
        let generated = blocks(root: root)
        var lines: [String] = []
        var present: [String: Int] = [:]   // a block's name → the index of its END line in `lines`
        var open: String?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix(begin) {
                let name = String(line.dropFirst(begin.count))
                guard open == nil else { throw Problem("block \(open!) has no end before block \(name)") }
                guard present[name] == nil else { throw Problem("block \(name) appears twice") }
                guard let content = generated.first(where: { $0.name == name })?.lines else {
                    throw Problem("block \(name) names nothing declared: remove it, with its prose")
                }
                lines += [line] + content
                open = name
            } else if line == end {
                guard let name = open else { throw Problem("an end without a block, line \(lines.count + 1)") }
                lines.append(line)
                present[name] = lines.count - 1
                open = nil
            } else if open == nil {
                lines.append(line)
            }
        }
        if let open { throw Problem("block \(open) has no end") }

        for (index, block) in generated.enumerated() where present[block.name] == nil {
            let wrapped = [begin + block.name] + block.lines + [end]
            if let previous = generated[..<index].last(where: { $0.family == block.family && present[$0.name] != nil }),
               let after = present[previous.name] {
                // After the previous entry's prose: before the next part of the page.
                let next = lines[(after + 1)...].firstIndex { line in
                    line.hasPrefix(begin) || [".SS", ".SH", ".PP", ".TP", ".EX"].contains { line == $0 || line.hasPrefix($0 + " ") }
                } ?? lines.count
                insert(wrapped, at: next, into: &lines, present: &present, name: block.name)
            } else if let next = generated[(index + 1)...].first(where: { $0.family == block.family && present[$0.name] != nil }),
                      let nextEnd = present[next.name],
                      let before = lines[..<nextEnd].lastIndex(of: begin + next.name) {
                insert(wrapped, at: before, into: &lines, present: &present, name: block.name)
            } else {
                throw Problem("no block \(block.name), and none of its kind to place it beside: write its section's blocks by hand")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func insert(_ block: [String], at index: Int, into lines: inout [String], present: inout [String: Int], name: String) {
        lines.insert(contentsOf: block, at: index)
        for (other, end) in present where end >= index { present[other] = end + block.count }
        present[name] = index + block.count - 1
    }

    /// A generated block: its name, its lines, and the blocks it is placed among when missing
    /// (the SYNOPSIS entries; a command's entries).
    struct Block {
        var name: String
        var family: String
        var lines: [String]
    }

    /// Every block the declarations make, in the order of the page.
    static func blocks(root: CommandSpec) -> [Block] {
        let subcommands = root.subcommands
        let spelling = subcommands.first { $0.inheritsGlobalOptions }?.name
        var blocks = subcommands.map { command in
            Block(name: "synopsis \(command.name)", family: "synopsis",
                  lines: synopsis(of: command, root: root, spellsGlobals: command.name == spelling))
        }
        blocks.append(Block(name: "synopsis \(root.name)", family: "synopsis", lines: rootSynopsis(of: root)))
        blocks += entries(of: root, options: ArgumentParser.acceptedOptions(along: [root]))
        for command in subcommands {
            // A heading has no neighbour to follow: a new command's section is written by hand.
            blocks.append(Block(name: "heading \(command.name)", family: "heading \(command.name)", lines: heading(of: command)))
            blocks += entries(of: command, options: command.options)
        }
        return blocks
    }

    /// An entry per argument, then per option, of `command`.
    private static func entries(of command: CommandSpec, options: [OptionSpec]) -> [Block] {
        command.arguments.map { Block(name: "\(command.name) \($0.displayName)", family: command.name, lines: item(for: $0)) }
            + options.map { Block(name: "\(command.name) \($0.displayName)", family: command.name, lines: item(for: $0)) }
    }
}
