import Synchronization
import Testing
@testable import BlectlCLI

/// The generic machinery, exercised with a small made-up command tree so the tests do
/// not depend on blectl's own declarations.
@Suite("ArgumentParser (generic)")
struct ArgumentParserTests {
    static let verbose = Flag("verbose", short: "v", help: "Talk more.", global: true)
    static let level = Option<String>("level", valueName: "n", help: "Level.", parser: .nonEmpty(expecting: "a level"), global: true)
    static let tag = Option<String>("tag", valueName: "tag", help: "Tag.", parser: .verbatim, repeatable: true)
    static let count = Option<Int16>("count", valueName: "count", help: "Count.", parser: .dBm(in: -5...5), default: 1)
    static let first = Option<String>("first", valueName: "x", help: "First.", parser: .verbatim)
    static let second = Option<String>("second", valueName: "x", help: "Second.", parser: .verbatim)
    static let source = Argument<String>("source", help: "Source.", parser: .verbatim)
    static let target = Argument<String>("target", help: "Target.", parser: .verbatim, optional: true)

    static let copy = CommandSpec(
        name: "copy", aliases: ["cp"], abstract: "Copy.",
        arguments: [source.spec, target.spec],
        options: [tag.spec, count.spec, first.spec, second.spec],
        allOrNoneGroups: [[first.spec.long, second.spec.long]]
    )
    static let quiet = CommandSpec(name: "quiet", abstract: "No globals.", inheritsGlobalOptions: false)
    static let root = CommandSpec(
        name: "tool", abstract: "A tool.", options: [verbose.spec, level.spec],
        entries: [.init(copy), .init(quiet)]
    )

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
        #expect(try values.requiredValue(of: Self.source) == "a")
        #expect(try values.value(of: Self.target) == "b")
    }

    @Test func requiredOptionsMustBeGivenAndShowWithoutBrackets() throws {
        let to = Option<String>("to", valueName: "place", help: "Where.", parser: .verbatim, required: true)
        let move = CommandSpec(name: "move", abstract: "Move.", arguments: [Self.source.spec], options: [to.spec, Self.tag.spec])
        let root = CommandSpec(name: "tool", abstract: "A tool.", entries: [.init(move)])
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
        #expect(try values.requiredValue(of: to) == "b")
        #expect(HelpFormatter.usage(for: [root, move], prefix: "Usage: ") == "Usage: tool move <source> --to <place> [--tag <tag> ...]")
        // An option with a default is never required.
        #expect(Option<String>("x", valueName: "x", help: "X.", parser: .verbatim, default: "d", required: true).spec.isRequired == false)
    }

    @Test func optionalArgumentMayBeOmitted() throws {
        let (_, values) = try parse(["copy", "a"])
        #expect(try values.value(of: Self.target) == nil)
    }

    @Test func defaultsApplyWhenAbsent() throws {
        let (_, values) = try parse(["copy", "a"])
        #expect(try values.requiredValue(of: Self.count) == 1)
        #expect(try values.values(of: Self.tag) == [])
        #expect(try values.value(of: Self.first) == nil)
        #expect(!values.isSet(Self.verbose))
    }

    @Test func shortFlagAndGlobalsOnBothSides() throws {
        let (_, values) = try parse(["-v", "copy", "a", "--level", "3"])
        #expect(values.isSet(Self.verbose))
        #expect(try values.value(of: Self.level) == "3")
    }

    @Test func repeatableCollectsEveryValue() throws {
        let (_, values) = try parse(["copy", "--tag", "x", "a", "--tag=", "--tag", "y=z"])
        #expect(try values.values(of: Self.tag) == ["x", "", "y=z"])
    }

    @Test func negativeNumbersAreValuesNotOptions() throws {
        let (_, values) = try parse(["copy", "--count", "-5", "-3"])
        #expect(try values.requiredValue(of: Self.count) == -5)
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
    }

    @Test func commandsCanOptOutOfGlobals() throws {
        #expect(throws: UsageError("Unknown option '--verbose'", subcommand: "quiet")) {
            _ = try parse(["quiet", "--verbose"])
        }
        let (path, values) = try parse(["--verbose", "quiet"])
        #expect(path == ["tool", "quiet"])
        #expect(values.isSet(Self.verbose))
    }

    @Test func conversionErrorsNameNounAndOption() throws {
        let (_, values) = try parse(["copy", "a", "--count", "9", "--level="])
        #expect(throws: UsageError("Invalid value '9' for '--count': expected a whole number of dBm from -5 to 5", subcommand: "copy")) {
            _ = try values.requiredValue(of: Self.count)
        }
        #expect(throws: UsageError("Invalid value '' for '--level': expected a level", subcommand: "copy")) {
            _ = try values.value(of: Self.level)
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
        let root = CommandSpec(name: "tool", abstract: "A tool.", options: [Self.verbose.spec, Self.level.spec],
                               entries: [entry(Self.copy), entry(Self.quiet)])
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
        let root = BlectlCommands.root
        #expect(root.subcommandNames == root.subcommands.map(\.name))
        #expect(root.subcommandNames.count == Subcommands.all.count + 2)
        for name in root.subcommandNames {
            let spec = root.subcommand(named: name)
            #expect(spec?.name == name)
            for alias in spec?.aliases ?? [] { #expect(root.subcommand(named: alias)?.name == name) }
        }
        for type in Subcommands.all {
            #expect(type.commandName == type.command.name)
            #expect(type.commandAliases == type.command.aliases)
        }
        #expect(root.subcommand(named: "version")?.name == "get-version")
        #expect(root.subcommand(named: "battery")?.name == "get-battery")
    }
}
