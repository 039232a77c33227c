import Foundation
import Testing
@testable import BlectlCLI

/// The man page follows the declarations: every subcommand has its synopsis and its
/// section, and every option it accepts is described there, with its short form where it
/// has one. A subcommand or option added without its page fails here.
@Suite("man page against the declarations")
struct ManPageTests {
    static let page: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("man/blectl.1")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// `--rssi-min` as roff writes it: `\-\-rssi\-min`.
    static func roff(_ text: String) -> String { text.replacing("-", with: #"\-"#) }

    /// The section `.SS "name ...` under COMMANDS, up to the next `.SS`/`.SH`.
    static func section(of name: String) -> String? {
        let commands = "\n" + (page.components(separatedBy: "\n.SH COMMANDS\n").dropFirst().first?
            .components(separatedBy: "\n.SH ").first ?? "")
        return commands.components(separatedBy: "\n.SS ").first { $0.hasPrefix("\"\(roff(name)) ") || $0.hasPrefix("\"\(roff(name))\"") }
    }

    @Test("every subcommand: a SYNOPSIS entry and a COMMANDS section", arguments: BlectlCommands.root.subcommands.map(\.name))
    func subcommandDocumented(name: String) throws {
        #expect(!Self.page.isEmpty)
        let synopsis = Self.page.components(separatedBy: "\n.SH DESCRIPTION").first ?? ""
        #expect(synopsis.contains("\n.B \(Self.roff(name))\n"), "SYNOPSIS lacks \(name)")
        #expect(Self.section(of: name) != nil, "COMMANDS lacks a section for \(name)")
    }

    @Test("every option of every subcommand is described in its section (global ones under GLOBAL OPTIONS), short form included",
          arguments: BlectlCommands.root.subcommands.map(\.name))
    func optionsDocumented(name: String) throws {
        let command = try #require(BlectlCommands.root.subcommand(named: name))
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
        for option in BlectlCommands.root.options {
            let long = Self.roff(option.displayName)
            #expect(global.contains(long), "GLOBAL OPTIONS lacks \(option.displayName)")
            if let short = option.short {
                #expect(global.contains(#".BR \-\#(short) ", " \#(long)"#), "GLOBAL OPTIONS: -\(short) not described")
            }
        }
    }
}
