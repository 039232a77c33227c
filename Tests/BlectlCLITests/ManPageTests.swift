import Foundation
import Testing
@testable import BlectlCLI

/// The man page follows the declarations: its generated blocks (each command's SYNOPSIS entry
/// and heading, each argument's and option's entry) are what `make man` makes of them now, so
/// a declaration changed without `make man` fails here; every subcommand has its section and
/// an example. blectl-sim's page has an example of each of its commands.
@Suite("man page against the declarations")
struct ManPageTests {
    static let page = file("man/blectl.1")
    static let simPage = file("man/blectl-sim.1")

    /// A file of the source tree, by its path from the top.
    static func file(_ path: String) -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(path)
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    /// The lines of the `.EX` ... `.EE` blocks of a page's EXAMPLES section.
    static func exampleLines(of page: String) -> [Substring] {
        let examples = page.components(separatedBy: "\n.SH EXAMPLES\n").dropFirst().first?
            .components(separatedBy: "\n.SH ").first ?? ""
        var lines: [Substring] = [], inBlock = false
        for line in examples.split(separator: "\n") {
            if line == ".EX" { inBlock = true } else if line == ".EE" { inBlock = false } else if inBlock { lines.append(line) }
        }
        return lines
    }

    /// Whether one of `lines` (roff) runs `program command`: the command is the first word
    /// after the program and its options (each with or without a value), followed by a
    /// space, a quote, a closing parenthesis or the end of the line.
    static func runs(_ program: String, _ command: String, in lines: [Substring]) -> Bool {
        func literal(_ text: String) -> String { roff(text).replacing("\\", with: "\\\\") }
        let option = #"\s+\\-\S+(\s+[^\s\\]\S*)?"#
        let pattern = #"(^|[\s"'(|;])"# + literal(program) + "(\(option))*" + #"\s+"# + literal(command) + #"($|[\s"')])"#
        guard let regex = try? Regex(pattern) else { return false }
        return lines.contains { $0.contains(regex) }
    }

    /// `--rssi-min` as roff writes it: `\-\-rssi\-min`.
    static func roff(_ text: String) -> String { text.replacing("-", with: #"\-"#) }

    /// The section `.SS "name ...` under COMMANDS, up to the next `.SS`/`.SH`.
    static func section(of name: String) -> String? {
        let commands = "\n" + (page.components(separatedBy: "\n.SH COMMANDS\n").dropFirst().first?
            .components(separatedBy: "\n.SH ").first ?? "")
        return commands.components(separatedBy: "\n.SS ").first { $0.hasPrefix("\"\(roff(name)) ") || $0.hasPrefix("\"\(roff(name))\"") }
    }

    @Test("every subcommand: a SYNOPSIS entry and a COMMANDS section", arguments: Blectl.spec.subcommands.map(\.name))
    func subcommandDocumented(name: String) throws {
        #expect(!Self.page.isEmpty)
        let synopsis = Self.page.components(separatedBy: "\n.SH DESCRIPTION").first ?? ""
        #expect(synopsis.contains("\n.B \(Self.roff(name))\n"), "SYNOPSIS lacks \(name)")
        #expect(Self.section(of: name) != nil, "COMMANDS lacks a section for \(name)")
    }

    @Test("every subcommand has an example in EXAMPLES", arguments: Blectl.spec.subcommands.map(\.name))
    func subcommandHasExample(name: String) {
        let lines = Self.exampleLines(of: Self.page)
        #expect(lines.count > 20)
        let found = Self.runs("blectl", name, in: lines)
        #expect(found, "EXAMPLES has no blectl \(name)")
    }

    @Test("the example check finds a subcommand only where it is run")
    func exampleCheckIsStrict() {
        let lines: [Substring] = [#"blectl \-\-format text scan"#, #"x=$(blectl info C0)"#, "blectl connectx",
                                  #"blectl help notify"#, #"blectl get\-version C0"#, "see blectl"]
        #expect(Self.runs("blectl", "scan", in: lines))
        #expect(Self.runs("blectl", "info", in: lines))
        #expect(Self.runs("blectl", "get-version", in: lines))
        #expect(!Self.runs("blectl", "connect", in: lines))
        #expect(!Self.runs("blectl", "notify", in: lines))
        #expect(!Self.runs("blectl", "unpair", in: lines))
        #expect(!Self.runs("blectl", "version", in: lines))
    }

    /// blectl-sim's commands, read from the `COMMANDS = {...}` table of sim/blectl-sim.
    static let simCommands: [String] = {
        let source = file("sim/blectl-sim")
        guard let table = source.components(separatedBy: "\nCOMMANDS = {").dropFirst().first?
            .components(separatedBy: "}").first else { return [] }
        return table.matches(of: #/"([a-z-]+)":/#).map { String($0.output.1) }
    }()

    @Test("blectl-sim.1: every command of sim/blectl-sim in SYNOPSIS and in EXAMPLES")
    func simCommandsDocumented() {
        #expect(Self.simCommands == ["start", "stop", "fault", "state", "calls", "faults", "device", "advertisements", "applications", "central"])
        let synopsis = Self.simPage.components(separatedBy: "\n.SH DESCRIPTION").first ?? ""
        let lines = Self.exampleLines(of: Self.simPage)
        for command in Self.simCommands {
            #expect(synopsis.contains("\n.B \(command)\n"), "blectl-sim.1 SYNOPSIS lacks \(command)")
            let found = Self.runs("blectl-sim", command, in: lines)
            #expect(found, "blectl-sim.1 EXAMPLES has no blectl-sim \(command)")
        }
    }

    @Test("every option of every subcommand is described in its section (global ones under GLOBAL OPTIONS), short form included",
          arguments: Blectl.spec.subcommands.map(\.name))
    func optionsDocumented(name: String) throws {
        let command = try #require(Blectl.spec.subcommand(named: name))
        let section = try #require(Self.section(of: name))
        let global = Self.page.components(separatedBy: "\n.SH GLOBAL OPTIONS\n").dropFirst().first?
            .components(separatedBy: "\n.SH ").first ?? ""
        for option in command.options {
            let long = Self.roff(option.displayName)
            #expect(section.contains(long), "\(name): \(option.displayName) not in its section")
            if let short = option.short {
                #expect(section.contains(#".BR \-\#(short) ", " \#(long)"#), "\(name): -\(short), \(option.displayName) not described")
            }
        }
        for option in Blectl.spec.options {
            let long = Self.roff(option.displayName)
            #expect(global.contains(long), "GLOBAL OPTIONS lacks \(option.displayName)")
            if let short = option.short {
                #expect(global.contains(#".BR \-\#(short) ", " \#(long)"#), "GLOBAL OPTIONS: -\(short) not described")
            }
        }
    }

    // MARK: - Generated blocks

    @Test("the generated blocks are what the declarations make now (else: make man)")
    func generatedBlocksAreCurrent() throws {
        let updated = try ManualPage.update(Self.page, root: Blectl.spec)
        let (old, new) = (Self.page.split(separator: "\n", omittingEmptySubsequences: false),
                          updated.split(separator: "\n", omittingEmptySubsequences: false))
        let first = old.indices.first { $0 >= new.count || old[$0] != new[$0] } ?? old.count
        #expect(updated == Self.page, "man/blectl.1 line \(first + 1) differs from what the declarations make; run make man")
    }

    @Test("a block for every argument and option, and no block that names nothing")
    func blocksMatchTheDeclarations() {
        let names = Self.page.split(separator: "\n").filter { $0.hasPrefix(ManualPage.begin) }.map { $0.dropFirst(ManualPage.begin.count) }
        let declared = ManualPage.blocks(root: Blectl.spec).map(\.name)
        #expect(names.map(String.init).sorted() == declared.sorted())
        #expect(names.contains("read --offset") && names.contains("synopsis get-battery") && names.contains("blectl --verbose"))
    }

    /// A page of the made-up tool's with one block of each kind, for the update's own rules.
    static let sample = """
        .SH SYNOPSIS
        \(ManualPage.begin)synopsis copy
        \(ManualPage.end)
        .SH OPTIONS
        \(ManualPage.begin)tool --verbose
        \(ManualPage.end)
        .SH COMMANDS
        \(ManualPage.begin)heading copy
        stale
        \(ManualPage.end)
        Copies.
        \(ManualPage.begin)copy <source>
        stale
        \(ManualPage.end)
        Hand-written prose about the source.
        \(ManualPage.begin)copy --count
        \(ManualPage.end)
        More prose.
        \(ManualPage.begin)heading quiet
        \(ManualPage.end)

        """

    @Test("update rewrites a block's content, keeps the prose, and adds a missing entry beside the one declared before it")
    func updateRewritesAndInserts() throws {
        let updated = try ManualPage.update(Self.sample, root: MadeUpTool.spec)
        let lines = updated.split(separator: "\n").map(String.init)
        #expect(!lines.contains("stale"))
        #expect(lines.contains(#".SS "copy \fIsource\fP [\fItarget\fP] [\-\-tag \fItag\fP ...] [\-\-count \fIcount\fP] [\-\-first \fIx\fP \-\-second \fIx\fP]""#))
        #expect(lines.contains("Source.") && lines.contains("(default: 1)"))
        #expect(lines.contains("Hand-written prose about the source.") && lines.contains("Copies.") && lines.contains("More prose."))
        let order = ["synopsis copy", "synopsis quiet", "synopsis tool", "tool --verbose", "tool --level", "tool --help", "heading copy",
                     "copy <source>", "copy <target>", "copy --tag", "copy --count", "copy --first", "copy --second", "heading quiet"]
            .compactMap { name in lines.firstIndex(of: ManualPage.begin + name) }
        #expect(order.count == 14 && order == order.sorted())
        #expect(lines.firstIndex(of: "Hand-written prose about the source.")! < lines.firstIndex(of: ManualPage.begin + "copy <target>")!)
        #expect(try ManualPage.update(updated, root: MadeUpTool.spec) == updated)
    }

    @Test("update refuses a block that names nothing declared, and one without its end", arguments: [
        ("\(ManualPage.begin)copy --frobnicate\n\(ManualPage.end)", "block copy --frobnicate names nothing declared: remove it, with its prose"),
        ("\(ManualPage.begin)copy --count\ntext", "block copy --count has no end"),
        ("\(ManualPage.end)", "an end without a block, line 1"),
        (sample.replacing("\(ManualPage.begin)heading quiet\n\(ManualPage.end)\n", with: ""),
         "no block heading quiet, and none of its kind to place it beside: write its section's blocks by hand"),
    ])
    func updateRefuses(page: String, problem: String) {
        #expect(throws: ManualPage.Problem(problem)) { try ManualPage.update(page, root: MadeUpTool.spec) }
    }
}
