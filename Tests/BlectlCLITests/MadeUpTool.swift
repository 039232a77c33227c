@testable import BlectlCLI

/// A small made-up command tree, so that the tests of the generic machinery (declarations,
/// parser, help) do not depend on blectl's own commands.
struct MadeUpTool: ParsableCommand {
    static let configuration = CommandConfiguration(name: "tool", abstract: "A tool.", subcommands: [Copy.self, Quiet.self])

    @Flag("verbose", short: "v", help: "Talk more.", global: true) var verbose = false
    @Option("level", valueName: "n", help: "Level.", parser: .nonEmpty(expecting: "a level"), global: true) var level: String?

    struct Copy: ParsableCommand {
        static let configuration = CommandConfiguration(name: "copy", aliases: ["cp"], abstract: "Copy.")

        @Argument("source", help: "Source.", parser: .verbatim) var source: String
        @Argument("target", help: "Target.", parser: .verbatim) var target: String?
        @Option("tag", valueName: "tag", help: "Tag.", parser: .verbatim) var tags: [String]
        @Option("count", valueName: "count", help: "Count.", parser: .dBm(in: -5...5)) var count: Int16 = 1
        @OptionGroup var pair: Pair?
    }

    /// Two options to give together or not at all.
    struct Pair: ParsableArguments, Equatable {
        @Option("first", valueName: "x", help: "First.", parser: .verbatim) var first: String
        @Option("second", valueName: "x", help: "Second.", parser: .verbatim) var second: String
    }

    struct Quiet: ParsableCommand {
        static let configuration = CommandConfiguration(name: "quiet", abstract: "No globals.", inheritsGlobalOptions: false)
    }

    /// A command with a required option, under a root of its own.
    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(name: "move", abstract: "Move.")

        @Argument("source", help: "Source.", parser: .verbatim) var source: String
        @Option("to", valueName: "place", help: "Where.", parser: .verbatim) var to: String
        @Option("tag", valueName: "tag", help: "Tag.", parser: .verbatim) var tags: [String]
    }

    struct MoveTool: ParsableCommand {
        static let configuration = CommandConfiguration(name: "tool", abstract: "A tool.", subcommands: [Move.self])
    }
}
