import Foundation
import Testing
@testable import BlectlCLI

/// The man page follows the declarations: every subcommand has its synopsis, its
/// section and an example, and every option it accepts is described there, with its short
/// form where it has one. A subcommand or option added without its page fails here.
/// blectl-sim's page has an example of each of its commands.
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
        #expect(Self.simCommands == ["start", "stop", "fault", "state", "faults"])
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
        var section = try #require(Self.section(of: name))
        // "The argument and options are those of get-version": that section describes them.
        if let range = section.range(of: "options are those of\n.BR "),
           let other = section[range.upperBound...].split(separator: " ").first {
            section = try #require(Self.section(of: String(other).replacing(#"\-"#, with: "-")))
        }
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
}
