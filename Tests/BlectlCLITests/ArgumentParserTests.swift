import Synchronization
import Testing
@testable import BlectlCLI

/// The generic machinery, exercised with a small made-up command tree (``MadeUpTool``) so the
/// tests do not depend on blectl's own declarations.
@Suite("ArgumentParser (generic)")
struct ArgumentParserTests {
    typealias Copy = MadeUpTool.Copy

    static let root = MadeUpTool.spec
    static let copy = Copy.spec

    func parse(_ arguments: [String]) throws(UsageError) -> (path: [String], values: ParsedValues) {
        switch try ArgumentParser(root: Self.root).parse(arguments) {
        case .help(let path): throw UsageError("unexpected help for \(path.map(\.name))")
        case .parsed(let path, let values): return (path.map(\.name), values)
        }
    }

    @Test func positionalsFillArgumentsInOrder() throws {
        let (path, values) = try parse(["cp", "a", "b"])
        #expect(path == ["tool", "copy"])
        #expect(values.arguments == ["source": "a", "target": "b"])
        #expect(values.subcommand == "copy")
        let copy = try Copy.parse(values)
        #expect(copy.source == "a")
        #expect(copy.target == "b")
    }

    @Test func requiredOptionsMustBeGivenAndShowWithoutBrackets() throws {
        let root = MadeUpTool.MoveTool.spec
        let move = MadeUpTool.Move.spec
        #expect(throws: UsageError("Missing expected argument '--to <place>'", subcommand: "move")) {
            try ArgumentParser(root: root).parse(["move", "a"])
        }
        // A missing argument is reported first, as it comes first in the usage.
        #expect(throws: UsageError("Missing expected argument '<source>'", subcommand: "move")) {
            try ArgumentParser(root: root).parse(["move"])
        }
        guard case .parsed(_, let values) = try ArgumentParser(root: root).parse(["move", "--to=b", "a"]) else {
            Issue.record("expected a parse")
            return
        }
        #expect(try MadeUpTool.Move.parse(values).to == "b")
        #expect(HelpFormatter.usage(for: [root, move], prefix: "Usage: ") == "Usage: tool move <source> --to <place> [--tag <tag> ...]")
        // An option with a default is never required.
        #expect(Copy.declarations.options.first { $0.long == "count" }?.isRequired == false)
    }

    @Test func optionalArgumentMayBeOmitted() throws {
        let (_, values) = try parse(["copy", "a"])
        #expect(try Copy.parse(values).target == nil)
    }

    @Test func defaultsApplyWhenAbsent() throws {
        let (_, values) = try parse(["copy", "a"])
        let copy = try Copy.parse(values)
        #expect(copy.count == 1)
        #expect(copy.tags == [])
        #expect(copy.pair == nil)
        #expect(try MadeUpTool.parse(values).verbose == false)
    }

    @Test func shortFlagAndGlobalsOnBothSides() throws {
        let (_, values) = try parse(["-v", "copy", "a", "--level", "3"])
        let tool = try MadeUpTool.parse(values)
        #expect(tool.verbose)
        #expect(tool.level == "3")
    }

    @Test func repeatableCollectsEveryValue() throws {
        let (_, values) = try parse(["copy", "--tag", "x", "a", "--tag=", "--tag", "y=z"])
        #expect(try Copy.parse(values).tags == ["x", "", "y=z"])
    }

    @Test func negativeNumbersAreValuesNotOptions() throws {
        let (_, values) = try parse(["copy", "--count", "-5", "-3"])
        #expect(try Copy.parse(values).count == -5)
        #expect(values.arguments["source"] == "-3")
    }

    @Test func inlineValueSplitsAtTheFirstEquals() throws {
        let (_, values) = try parse(["copy", "a", "--first==b=c", "--second=x"])
        #expect(values.optionValues["first"] == ["=b=c"])
        #expect(values.optionValues["second"] == ["x"])
    }

    @Test func allOrNoneGroup() throws {
        #expect(throws: UsageError("Missing '--second': give all of '--first' and '--second', or none", subcommand: "copy")) {
            _ = try parse(["copy", "a", "--first", "1"])
        }
        let (_, values) = try parse(["copy", "a", "--second", "2", "--first", "1"])
        #expect(values.optionValues == ["first": ["1"], "second": ["2"]])
        #expect(try Copy.parse(values).pair?.first == "1")
        #expect(try Copy.parse(values).pair?.second == "2")
    }

    @Test func commandsCanOptOutOfGlobals() throws {
        #expect(throws: UsageError("Unknown option '--verbose'", subcommand: "quiet")) {
            _ = try parse(["quiet", "--verbose"])
        }
        let (path, values) = try parse(["--verbose", "quiet"])
        #expect(path == ["tool", "quiet"])
        #expect(try MadeUpTool.parse(values).verbose)
    }

    @Test func conversionErrorsNameNounAndOption() throws {
        let (_, values) = try parse(["copy", "a", "--count", "9", "--level="])
        #expect(throws: UsageError("Invalid value '9' for '--count': expected a whole number of dBm from -5 to 5", subcommand: "copy")) {
            _ = try Copy.parse(values)
        }
        #expect(throws: UsageError("Invalid value '' for '--level': expected a level", subcommand: "copy")) {
            _ = try MadeUpTool.parse(values)
        }
    }

    @Test func helpReportsThePathReached() throws {
        guard case .help(let path) = try ArgumentParser(root: Self.root).parse(["cp", "--bogus", "-h", "x", "y", "z"]) else {
            Issue.record("expected help")
            return
        }
        #expect(path.map(\.name) == ["tool", "copy"])
    }

    @Test("isOptionLike", arguments: [
        ("-h", true), ("--help", true), ("--", true), ("-x-", true), ("-.", true), ("-.x", true),
        ("-", false), ("", false), ("x", false), ("-5", false), ("-70", false), ("-.5", false), ("-0x", false),
    ])
    func optionLike(token: String, expected: Bool) {
        #expect(ArgumentParser.isOptionLike(token) == expected)
    }

    @Test func helpPageForMadeUpCommand() {
        #expect(HelpFormatter.help(for: [Self.root, Self.copy]) == """
            OVERVIEW: Copy.

            USAGE: tool copy <source> [<target>] [--tag <tag> ...] [--count <count>]
                             [--first <x> --second <x>] [--verbose] [--level <n>]

            ARGUMENTS:
              <source>                Source.
              <target>                Target.

            OPTIONS:
              --tag <tag>             Tag.
              --count <count>         Count. (default: 1)
              --first <x>             First.
              --second <x>            Second.
              -v, --verbose           Talk more.
              --level <n>             Level.
              -h, --help              Show help information.

            """)
    }

    @Test func wrapKeepsWordsAndWidth() {
        let text = String(repeating: "word ", count: 40) + String(repeating: "x", count: 100)
        let lines = HelpFormatter.wrap(text, firstPrefix: "FIRST: ", indent: 4)
        #expect(lines.first?.hasPrefix("FIRST: word") == true)
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("    ") })
        #expect(lines.dropLast().allSatisfy { $0.count <= HelpFormatter.width })
        #expect(lines.last == "    " + String(repeating: "x", count: 100))
        let words = lines.joined(separator: " ").split(separator: " ").dropFirst()
        #expect(words.count == 41)
    }

    @Test("a command line builds only the declaration of the subcommand it names; help builds them all")
    func onlyTheNamedSubcommandIsBuilt() throws {
        let built = Mutex<[String]>([])
        func entry(_ spec: CommandSpec) -> CommandSpec.Entry {
            CommandSpec.Entry(name: spec.name, aliases: spec.aliases) {
                built.withLock { $0.append(spec.name) }
                return spec
            }
        }
        let root = CommandSpec(name: "tool", abstract: "A tool.", options: MadeUpTool.declarations.options,
                               entries: [entry(Self.copy), entry(MadeUpTool.Quiet.spec)])
        #expect(root.hasSubcommands)
        #expect(root.subcommandNames == ["copy", "quiet"])
        #expect(built.withLock { $0 }.isEmpty)

        guard case .parsed(let path, _) = try ArgumentParser(root: root).parse(["-v", "cp", "a"]) else {
            Issue.record("expected a parse")
            return
        }
        #expect(path.map(\.name) == ["tool", "copy"])
        #expect(built.withLock { $0 } == ["copy"])
        #expect(throws: UsageError("Unknown subcommand 'move'")) { try ArgumentParser(root: root).parse(["move"]) }
        #expect(built.withLock { $0 } == ["copy"])

        built.withLock { $0 = [] }
        #expect(HelpFormatter.help(for: [root]).contains("quiet"))
        #expect(built.withLock { $0 } == ["copy", "quiet"])
    }

    @Test("blectl's root names each subcommand as its declaration does")
    func blectlEntriesNameTheirDeclarations() {
        let root = Blectl.spec
        #expect(root.subcommandNames == root.subcommands.map(\.name))
        #expect(root.subcommandNames.count == Subcommands.all.count + 2)
        for name in root.subcommandNames {
            let spec = root.subcommand(named: name)
            #expect(spec?.name == name)
            for alias in spec?.aliases ?? [] { #expect(root.subcommand(named: alias)?.name == name) }
        }
        #expect(root.subcommand(named: "version")?.name == "get-version")
        #expect(root.subcommand(named: "battery")?.name == "get-battery")
    }
}
