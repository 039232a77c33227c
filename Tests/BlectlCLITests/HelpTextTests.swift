import Testing
@testable import BlectlCLI

/// Help across every command: every way of asking prints the same text, the declared options
/// are the ones expected and all described, lines fit; the top-level page's sections. The
/// exact pages are in HelpPage…Tests.
@Suite("Help text")
struct HelpTextTests {
    /// Every way to ask for one subcommand's help, which must all print the same text: `NAME
    /// --help`, `NAME -h`, `help NAME`, the same by each alias, and a few more below.
    static let helpRequests: [(command: String, requests: [[String]])] = Blectl.spec.subcommands.map { command in
        let names = [command.name] + command.aliases
        let requests = names.flatMap { [[$0, "--help"], [$0, "-h"], ["help", $0]] } + (extraHelpRequests[command.name] ?? [])
        return (command.name, requests)
    }

    /// Ways to ask for help beyond the usual ones: the global flag before the subcommand, and
    /// after an argument.
    static let extraHelpRequests: [String: [[String]]] = [
        "scan": [["--help", "scan"]],
        "info": [["--help", "info"]],
        "notify": [["notify", "C0:FF:EE:00:00:04", "--help"]],
    ]

    /// The options each subcommand must document, written out by hand so that
    /// dropping an option from a declaration makes this test fail.
    static let expectedOptions: [String: [String]] = [
        "blectl": ["--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "--version", "-h, --help"],
        "scan": [
            "-t, --timeout <seconds>", "-n, --name <substring>", "-s, --service <uuid>", "--address <address>",
            "--rssi-min <dbm>", "--decoded <format>", "--count <n>", "--updates", "--min-interval <seconds>", "--changes-only",
            "--lost-after <seconds>", "--bindkey <address=key>", "--mqtt <url>", "--mqtt-gateway <name>", "--mqtt-keepalive <seconds>", "--mqtt-queue <n>",
            "--mqtt-cafile <path>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "connect": ["-t, --timeout <seconds>", "--retries <n>", "--values", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "get-version": [
            "-t, --timeout <seconds>", "--retries <n>", "--vendor-service <uuid>", "--vendor-write <uuid>", "--vendor-notify <uuid>",
            "--from <path>", "--parallel <count>", "--overall-timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "get-battery": [
            "-t, --timeout <seconds>", "--retries <n>", "--vendor-service <uuid>", "--vendor-write <uuid>", "--vendor-notify <uuid>",
            "--from <path>", "--parallel <count>", "--overall-timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "read": [
            "-s, --service <uuid>", "--descriptor <uuid>", "--offset <bytes>", "-t, --timeout <seconds>",
            "--retries <n>", "--from <path>", "--parallel <count>", "--overall-timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "write": [
            "-s, --service <uuid>", "--text", "--without-response", "--file <path>", "-t, --timeout <seconds>",
            "--retries <n>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "request": [
            "--write <uuid>", "--notify <uuid>", "-s, --service <uuid>", "--text", "--response-prefix <hex>", "--count <n>",
            "-t, --timeout <seconds>", "--retries <n>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "notify": [
            "-s, --service <uuid>", "-t, --timeout <seconds>", "--count <n>", "--reconnect", "--start-notify",
            "--mqtt <url>", "--mqtt-gateway <name>", "--mqtt-keepalive <seconds>", "--mqtt-queue <n>", "--mqtt-cafile <path>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "disconnect": ["-t, --timeout <seconds>", "--from <path>", "--parallel <count>", "--overall-timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "info": ["-t, --timeout <seconds>", "--from <path>", "--parallel <count>", "--overall-timeout <seconds>", "--bindkey <address=key>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "devices": ["-t, --timeout <seconds>", "--connected", "--paired", "--bindkey <address=key>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "adapters": ["-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "pair": ["-t, --timeout <seconds>", "--trust", "--passkey <passkey>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "advertise": ["-t, --timeout <seconds>", "-n, --name <text>", "-s, --service <uuid>", "--manufacturer-data <id:hex>", "--service-data <uuid:hex>",
                      "--tx-power", "--appearance <n>", "--discoverable", "--type <type>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose",
                      "-q, --quiet", "-h, --help"],
        "serve": ["-t, --timeout <seconds>", "-n, --name <text>", "--no-advertise", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose",
                  "-q, --quiet", "-h, --help"],
        "unpair": ["-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "doctor": ["-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "completions": ["-h, --help"],
        "help": ["-h, --help"],
    ]

    static let expectedArguments: [String: [String]] = [
        "blectl": [], "scan": [], "connect": ["<address>"], "get-version": ["<address>"],
        "get-battery": ["<address>"], "read": ["<address>", "<characteristic>"],
        "write": ["<address>", "<characteristic>", "<value>"], "request": ["<address>", "<value>"],
        "notify": ["<address>", "<characteristic>"], "disconnect": ["<address>"], "info": ["<address>"], "devices": [], "adapters": [],
        "pair": ["<address>"], "unpair": ["<address>"], "advertise": [], "serve": ["<profile>"], "doctor": [], "completions": ["<shell>"], "help": ["<subcommand>"],
    ]

    /// `blectl` and every subcommand it declares.
    static var allCommands: [String] {
        ["blectl"] + Blectl.spec.subcommands.map(\.name)
    }

    /// The lists above are the contract: a subcommand added, removed or renamed fails here
    /// until they say so.
    @Test func theListsCoverExactlyTheDeclaredCommands() {
        #expect(Set(Self.expectedOptions.keys) == Set(Self.allCommands))
        #expect(Set(Self.expectedArguments.keys) == Set(Self.allCommands))
        #expect(Self.allCommands.count == 20)
        #expect(Set(Self.extraHelpRequests.keys).isSubset(of: Set(Self.allCommands)))
    }

    static func path(for command: String) -> [CommandSpec] {
        command == "blectl" ? [Blectl.spec] : Blectl.path(forSubcommand: command)
    }

    @Test("every way to ask for a subcommand's help prints the same text", arguments: helpRequests.map(\.command))
    func sameTextEverywhere(command: String) throws {
        let requests = try #require(Self.helpRequests.first { $0.command == command }).requests
        let texts = requests.compactMap { helpText($0) }
        #expect(texts.count == requests.count)
        #expect(Set(texts).count == 1)
        #expect(texts.first == HelpFormatter.help(for: Self.path(for: command)))
    }

    @Test("top-level help for every way of asking", arguments: [["--help"], ["-h"], ["help"]])
    func topLevelHelp(arguments: [String]) {
        #expect(helpText(arguments) == HelpFormatter.help(for: [Blectl.spec]))
    }

    @Test("the declarations accept exactly the options listed here", arguments: allCommands)
    func declaredOptionsMatchExpectation(command: String) {
        let declared = ArgumentParser.acceptedOptions(along: Self.path(for: command)).map(\.helpLabel)
        #expect(declared == Self.expectedOptions[command])
        let arguments = Self.path(for: command).last?.arguments.map(\.displayName)
        #expect(arguments == Self.expectedArguments[command])
    }

    @Test("help lists every declared option and argument with its help text", arguments: allCommands)
    func helpMentionsEveryOption(command: String) throws {
        let path = Self.path(for: command)
        let text = HelpFormatter.help(for: path)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for option in ArgumentParser.acceptedOptions(along: path) {
            #expect(lines.contains { $0.hasPrefix("  " + option.helpLabel + " ") || $0 == "  " + option.helpLabel },
                    "\(command) help lacks \(option.helpLabel)")
            let firstWords = option.help.split(separator: " ").prefix(3).joined(separator: " ")
            #expect(text.contains(firstWords), "\(command) help lacks the text of \(option.helpLabel)")
        }
        for label in Self.expectedOptions[command] ?? [] {
            #expect(lines.contains { $0.hasPrefix("  " + label) }, "\(command) help lacks \(label)")
        }
        for argument in Self.expectedArguments[command] ?? [] {
            #expect(lines.contains { $0.hasPrefix("  " + argument + " ") }, "\(command) help lacks \(argument)")
        }
    }

    @Test("every help line stays under 80 columns", arguments: allCommands)
    func linesUnder80Columns(command: String) {
        let text = HelpFormatter.help(for: Self.path(for: command))
        for line in text.split(separator: "\n") {
            #expect(line.count < 80, "too long: \(line)")
            #expect(!line.hasSuffix(" "), "trailing space: \(line)")
        }
        #expect(text.hasSuffix("\n") && !text.hasSuffix("\n\n"))
    }

    @Test("usage lines in errors stay under 80 columns", arguments: allCommands)
    func usageUnder80Columns(command: String) {
        let subcommand = command == "blectl" ? nil : command
        for line in renderUsageError(UsageError("x", subcommand: subcommand)).split(separator: "\n") {
            #expect(line.count < 80, "too long: \(line)")
        }
    }

    @Test func defaultsAreShown() throws {
        let scan = try #require(helpText(["help", "scan"]))
        #expect(scan.contains("(default: 10)"))
        #expect(scan.contains("(default: json)"))
        let connect = try #require(helpText(["help", "connect"]))
        #expect(connect.contains("(default: 20)"))
        #expect(!connect.contains("(default: 10)"))
    }

    @Test func topLevelHelpSections() throws {
        let text = try #require(helpText(["--help"]))
        #expect(text.hasPrefix("OVERVIEW: Probe Bluetooth LE devices through BlueZ.\n\nUSAGE: blectl [--adapter <adapter>] [--format <format>] [--verbose ...]\n              [--quiet] <subcommand>\n"))
        for header in ["OPTIONS:", "SUBCOMMANDS:", "EXIT STATUS:"] {
            #expect(text.contains("\n\(header)\n"), "missing \(header)")
        }
        #expect(text.contains("\n  See 'blectl help <subcommand>' for detailed help.\n"))
        for line in [
            "  scan                    Scan for Bluetooth LE devices and print each one",
            "  connect                 Connect to a device and print its GATT services.",
            "  get-version, version    Read a device's firmware version.",
            "  get-battery, battery    Read a device's battery level.",
            "  read                    Read a characteristic's value.",
            "  write                   Write a value to a characteristic.",
            "  request                 Write a request and print the responses notified.",
            "  notify                  Print the notifications of a characteristic.",
            "  disconnect              Disconnect a device, whoever connected it.",
            "  pair                    Pair with a device, and print its pairing state.",
            "  unpair                  Remove a device and its pairing from BlueZ.",
            "  help                    Show subcommand help information.",
            "  --version               Show the version.",
        ] {
            #expect(text.contains(line + "\n"), "missing line: \(line)")
        }
    }

    @Test("exit statuses in the top-level help", arguments: [
        ("0", "Success."),
        ("1", "BlueZ reported a failure."),
        ("2", "Device not found."),
        ("3", "Not supported by the device."),
        ("4", "Disconnected."),
        ("5", "Busy: an operation already in progress, adapter busy."),
        ("6", "Several devices failed, with different statuses."),
        ("64", "Usage error."),
        ("69", "Bluetooth unavailable: no bluetoothd, no adapter, powered off, rfkill."),
        ("70", "Internal error."),
        ("74", "Writing standard output failed (a full disk, an I/O error)."),
        ("77", "Permission denied by the D-Bus policy or bluetoothd, or pairing wanted."),
        ("124", "Timed out."),
        ("130", "Interrupted by SIGINT."),
        ("141", "Standard output's reader went away (SIGPIPE)."),
        ("143", "Interrupted by SIGTERM."),
    ])
    func exitStatus(code: String, meaning: String) throws {
        let text = try #require(helpText(["--help"]))
        let padded = code + String(repeating: " ", count: 6 - code.count)
        #expect(text.contains("\n  \(padded)\(meaning)\n"))
    }

    @Test func subcommandHelpDoesNotListExitStatusOrVersion() throws {
        let text = try #require(helpText(["scan", "--help"]))
        #expect(!text.contains("EXIT STATUS"))
        #expect(!text.contains("--version"))
        #expect(!text.contains("SUBCOMMANDS"))
    }

    @Test func deviceHelpDescribesTheArgument() throws {
        let text = try #require(helpText(["help", "get-battery"]))
        #expect(text.contains("\nARGUMENTS:\n  <address>               The device's address, like C0:FF:EE:00:00:01; several\n"))
        #expect(text.contains("USAGE: blectl get-battery <address> ... [--timeout <seconds>] [--retries <n>]\n"))
        #expect(text.contains("[--vendor-service <uuid> --vendor-write <uuid>\n"))
    }
}
