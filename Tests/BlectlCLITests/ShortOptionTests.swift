import Testing
@testable import BlectlCLI
import BlueZKit

/// Short names where the field has them (`-t` timeout, `-f` format, `-n` name, `-s`
/// service, `-h` help): `-t 5` and `-t5`, letters together with a value-taking one last.
@Suite("short options")
struct ShortOptionTests {
    static func parse(_ arguments: [String]) -> Result<Invocation, UsageError> { parseCommandLine(arguments) }

    @Test("each short form means what its long form means", arguments: [
        (["scan", "-t", "2.5"], ["scan", "--timeout", "2.5"]),
        (["scan", "-t2.5"], ["scan", "--timeout", "2.5"]),
        (["scan", "-n", "Tag", "-nSensor"], ["scan", "--name", "Tag", "--name", "Sensor"]),
        (["scan", "-s", "180f"], ["scan", "--service", "180f"]),
        (["-f", "text", "scan"], ["--format", "text", "scan"]),
        (["scan", "-ftext"], ["scan", "--format", "text"]),
        (["read", "C0:FF:EE:00:00:01", "2a19", "-s180f", "-t", "3"], ["read", "C0:FF:EE:00:00:01", "2a19", "--service", "180f", "--timeout", "3"]),
        (["notify", "C0:FF:EE:00:00:01", "2a19", "-t", "inf"], ["notify", "C0:FF:EE:00:00:01", "2a19", "--timeout", "inf"]),
        (["devices", "-t1"], ["devices", "--timeout", "1"]),
        (["scan", "--rssi-min", "-70", "-t", "1"], ["scan", "--rssi-min=-70", "--timeout=1"]),
        (["-v", "scan"], ["--verbose", "scan"]),
        (["scan", "-vv"], ["scan", "--verbose", "--verbose"]),
        (["-v", "scan", "-v"], ["scan", "--verbose", "--verbose"]),
        (["scan", "-q"], ["--quiet", "scan"]),
        (["scan", "-qt5"], ["scan", "--quiet", "--timeout", "5"]),
        (["scan", "-qvt", "5"], ["scan", "--quiet", "--verbose", "--timeout", "5"]),
    ])
    func sameAsLong(short: [String], long: [String]) throws {
        let a = try Self.parse(short).get()
        let b = try Self.parse(long).get()
        #expect(a == b)
    }

    @Test("-v counts: none 0, -v 1, -vv and -v -v 2, -vvv 3; -q sets quiet", arguments: [
        ([String](), 0, false), (["-v"], 1, false), (["-vv"], 2, false), (["-v", "-v"], 2, false), (["-vvv"], 3, false),
        (["--verbose", "-v"], 2, false), (["-q"], 0, true), (["-qv"], 1, true), (["--quiet", "-vv"], 2, true),
    ])
    func verbosity(flags: [String], level: Int, quiet: Bool) throws {
        guard case .run(let global, _) = try Self.parse(flags + ["scan"]).get() else { Issue.record("not run"); return }
        #expect(global.verbosity == level)
        #expect(global.quiet == quiet)
    }

    @Test("help through a short letter, alone or among others")
    func help() throws {
        guard case .help(let text) = try Self.parse(["scan", "-h"]).get() else { Issue.record("not help"); return }
        #expect(text.contains("-t, --timeout <seconds>"))
        #expect(text.contains("-n, --name <substring>"))
        #expect(text.contains("-s, --service <uuid>"))
        #expect(text.contains("-f, --format <format>"))
        guard case .help = try Self.parse(["scan", "-ht5"]).get() else { Issue.record("not help"); return }
    }

    @Test("usage errors name the letter or the option", arguments: [
        (["scan", "-x"], "Unknown option '-x'"),
        (["scan", "-t"], "Missing value for '--timeout'"),
        (["scan", "-t", "--updates"], "Missing value for '--timeout'"),
        (["scan", "-t1", "-t2"], "Option '--timeout' cannot be repeated"),
        (["scan", "-tx"], "Invalid value 'x' for '--timeout'"),
        (["scan", "-t=5"], "Invalid value '=5' for '--timeout'"),
        (["connect", "-n", "x", "C0:FF:EE:00:00:01"], "Unknown option '-n'"),
        (["scan", "-uq"], "Unknown option '-u'"),
        (["scan", "-qq"], "Option '--quiet' cannot be repeated"),
        (["scan", "--verbose=2"], "Option '--verbose' takes no value"),
        (["scan", "-v=2"], "Unknown option '-='"),
    ])
    func errors(arguments: [String], message: String) {
        guard case .failure(let error) = Self.parse(arguments) else { Issue.record("parsed: \(arguments)"); return }
        #expect(error.message.hasPrefix(message), "\(error.message)")
    }

    /// No command has two options with one letter, and every letter is one the field uses
    /// for that meaning.
    @Test("short letters: unique per command, and only the field's")
    func uniqueLetters() {
        let field: [Character: String] = ["t": "timeout", "f": "format", "n": "name", "s": "service", "h": "help",
                                          "v": "verbose", "q": "quiet"]
        for command in Blectl.spec.subcommands {
            let options = ArgumentParser.acceptedOptions(along: [Blectl.spec, command])
            let letters = options.compactMap(\.short)
            #expect(Set(letters).count == letters.count, "\(command.name): \(letters)")
            for option in options {
                if let letter = option.short { #expect(field[letter] == option.long, "\(command.name): -\(letter) is --\(option.long)") }
            }
            for option in options where field.values.contains(option.long) {
                #expect(option.short != nil, "\(command.name): --\(option.long) has no short name")
            }
        }
    }
}
