import Testing
@testable import BlectlCLI

@Suite("Help text")
struct HelpTextTests {
    /// Every way to ask for one subcommand's help, which must all print the same text.
    static let helpRequests: [(command: String, requests: [[String]])] = [
        ("scan", [["scan", "--help"], ["scan", "-h"], ["help", "scan"], ["--help", "scan"]]),
        ("connect", [["connect", "--help"], ["connect", "-h"], ["help", "connect"]]),
        ("get-version", [["get-version", "--help"], ["version", "-h"], ["help", "get-version"], ["help", "version"]]),
        ("get-battery", [["get-battery", "--help"], ["battery", "-h"], ["help", "get-battery"], ["help", "battery"]]),
        ("read", [["read", "--help"], ["read", "-h"], ["help", "read"]]),
        ("write", [["write", "--help"], ["write", "-h"], ["help", "write"]]),
        ("request", [["request", "--help"], ["request", "-h"], ["help", "request"]]),
        ("notify", [["notify", "--help"], ["notify", "-h"], ["help", "notify"], ["notify", "C0:FF:EE:00:00:04", "--help"]]),
        ("disconnect", [["disconnect", "--help"], ["disconnect", "-h"], ["help", "disconnect"]]),
        ("info", [["info", "--help"], ["info", "-h"], ["help", "info"], ["--help", "info"]]),
        ("devices", [["devices", "--help"], ["devices", "-h"], ["help", "devices"]]),
        ("adapters", [["adapters", "--help"], ["adapters", "-h"], ["help", "adapters"]]),
        ("pair", [["pair", "--help"], ["pair", "-h"], ["help", "pair"]]),
        ("unpair", [["unpair", "--help"], ["unpair", "-h"], ["help", "unpair"]]),
        ("doctor", [["doctor", "--help"], ["doctor", "-h"], ["help", "doctor"]]),
        ("help", [["help", "--help"], ["help", "help"]]),
    ]

    /// The options each subcommand must document, written out by hand so that
    /// dropping an option from a declaration makes this test fail.
    static let expectedOptions: [String: [String]] = [
        "blectl": ["--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "--version", "-h, --help"],
        "scan": [
            "-t, --timeout <seconds>", "-n, --name <substring>", "-s, --service <uuid>", "--address <address>",
            "--rssi-min <dbm>", "--count <n>", "--updates", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "connect": ["-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "get-version": [
            "-t, --timeout <seconds>", "--vendor-service <uuid>", "--vendor-write <uuid>", "--vendor-notify <uuid>",
            "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "get-battery": [
            "-t, --timeout <seconds>", "--vendor-service <uuid>", "--vendor-write <uuid>", "--vendor-notify <uuid>",
            "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "read": [
            "-s, --service <uuid>", "--descriptor <uuid>", "--offset <bytes>", "-t, --timeout <seconds>",
            "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "write": [
            "-s, --service <uuid>", "--text", "--without-response", "--file <path>", "-t, --timeout <seconds>",
            "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "request": [
            "--write <uuid>", "--notify <uuid>", "-s, --service <uuid>", "--text", "--response-prefix <hex>", "--count <n>",
            "-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "notify": [
            "-s, --service <uuid>", "-t, --timeout <seconds>", "--count <n>", "--reconnect",
            "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help",
        ],
        "disconnect": ["-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "info": ["-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "devices": ["-t, --timeout <seconds>", "--connected", "--paired", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "adapters": ["-t, --timeout <seconds>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
        "pair": ["-t, --timeout <seconds>", "--trust", "--passkey <passkey>", "--adapter <adapter>", "-f, --format <format>", "-v, --verbose", "-q, --quiet", "-h, --help"],
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
        "pair": ["<address>"], "unpair": ["<address>"], "doctor": [], "completions": ["<shell>"], "help": ["<subcommand>"],
    ]

    static var allCommands: [String] {
        ["blectl", "scan", "connect", "get-version", "get-battery", "read", "write", "request", "notify",
         "disconnect", "info", "devices", "adapters", "pair", "unpair", "doctor", "completions", "help"]
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

    @Test func scanHelpExactly() throws {
        let text = try #require(helpText(["scan", "--help"]))
        #expect(text == """
            OVERVIEW: Scan for Bluetooth LE devices and print each one found.

            Prints one JSON line per device as it is first seen during this scan, until the
            timeout; reaching the timeout is success, even with no device found. With
            --count, the scan ends with success once that many devices are printed, and
            reaching the timeout first exits 124. Devices BlueZ only remembers from earlier
            are not printed. A device must pass every kind of filter given (--rssi-min
            checked by BlueZ and again by blectl; --name, --service and --address by blectl
            only). Devices that do not advertise as discoverable are found too. --timeout 0
            connects, checks the adapter and prints nothing.

            USAGE: blectl scan [--timeout <seconds>] [--name <substring> ...]
                               [--service <uuid> ...] [--address <address> ...]
                               [--rssi-min <dbm>] [--count <n>] [--updates]
                               [--adapter <adapter>] [--format <format>] [--verbose ...]
                               [--quiet]

            OPTIONS:
              -t, --timeout <seconds>
                                      Stop scanning after this many seconds; decimals
                                      allowed, inf to scan until interrupted. (default: 10)
              -n, --name <substring>  Only report devices whose name contains this text,
                                      ignoring case. Repeat to accept any of several.
              -s, --service <uuid>    Only report devices that list this service UUID, such
                                      as 180f: advertised, or found by an earlier
                                      connection. Repeat to accept any of several.
              --address <address>     Only report the device with this address. Repeat to
                                      accept any of several.
              --rssi-min <dbm>        Only report devices heard at this signal strength or
                                      stronger, in dBm from -127 to 20.
              --count <n>             Stop after this many devices; if the timeout comes
                                      first, exit 124.
              --updates               Print a line for every advertisement update, not just
                                      the first sighting of each device.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func readHelpExactly() throws {
        let text = try #require(helpText(["read", "--help"]))
        #expect(text == """
            OVERVIEW: Read a characteristic's value.

            Finds the device (scanning if BlueZ does not know it), connects, reads the
            characteristic, or with --descriptor one of its descriptors, and prints the
            value in hex and, when it is clean UTF-8, as text; then disconnects, unless the
            device was already connected. A characteristic without the read flag is refused
            before anything is sent.

            USAGE: blectl read <address> <characteristic> [--service <uuid>]
                               [--descriptor <uuid>] [--offset <bytes>]
                               [--timeout <seconds>] [--adapter <adapter>]
                               [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.
              <characteristic>        The characteristic's UUID: 16-bit (2a19), 32-bit or
                                      128-bit.

            OPTIONS:
              -s, --service <uuid>    The service the characteristic is in, when its UUID
                                      occurs in several services.
              --descriptor <uuid>     Read this descriptor of the characteristic instead,
                                      such as 2901.
              --offset <bytes>        Start this many bytes into the value, 0 to 65535.
                                      (default: 0)
              -t, --timeout <seconds>
                                      Give up after this many seconds, connecting included;
                                      decimals allowed, more than 0. (default: 20)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func writeHelpExactly() throws {
        let text = try #require(helpText(["write", "--help"]))
        #expect(text == """
            OVERVIEW: Write a value to a characteristic.

            Finds the device (scanning if BlueZ does not know it), connects, writes the
            value with response (the device acknowledges it) or, with --without-response,
            without; then disconnects, unless the device was already connected. A
            characteristic whose flags do not allow that kind of write is refused before
            anything is sent (exit 3).

            With --without-response --file PATH (or - for standard input) instead of
            <value>, sends the bytes as write-without-response packets of the link's
            maximum size, MTU - 3 bytes (512 at most) each but the last: through the socket
            BlueZ hands over with AcquireWrite, waiting whenever it is full, or, when BlueZ
            refuses AcquireWrite, by WriteValue with type command. Prints address, service,
            characteristic, bytes, packets, mtu, acquired and seconds once BlueZ has taken
            every packet. --timeout then bounds finding, connecting and acquiring, and then
            each wait for the link to take the next packet; reading the input has no limit.

            USAGE: blectl write <address> <characteristic> [<value>] [--service <uuid>]
                                [--text] [--without-response] [--file <path>]
                                [--timeout <seconds>] [--adapter <adapter>]
                                [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.
              <characteristic>        The characteristic's UUID: 16-bit (2a19), 32-bit or
                                      128-bit.
              <value>                 The bytes to write: hex (0102ff, 01:02:ff or
                                      0x0102ff), or text with --text. Not with --file.

            OPTIONS:
              -s, --service <uuid>    The service the characteristic is in, when its UUID
                                      occurs in several services.
              --text                  Take <value> as UTF-8 text instead of hex bytes.
              --without-response      Write without response (ATT Write Command) instead of
                                      with response; the characteristic must allow it.
                                      Required with --file.
              --file <path>           Stream this file (- for standard input) as
                                      write-without-response packets of the link's maximum
                                      size (MTU - 3 bytes, 512 at most), through
                                      AcquireWrite when BlueZ grants it, else WriteValue.
                                      Needs --without-response; takes the place of <value>.
              -t, --timeout <seconds>
                                      Give up after this many seconds, connecting included;
                                      decimals allowed, more than 0. (default: 20)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func requestHelpExactly() throws {
        let text = try #require(helpText(["request", "--help"]))
        #expect(text == """
            OVERVIEW: Write a request and print the responses notified.

            Finds the device (scanning if BlueZ does not know it), connects, subscribes to
            the notify characteristic, writes the request to the write characteristic, and
            prints the first --count notifications that start with --response-prefix,
            counting those that come before the write's reply; other notifications are
            ignored. Then stops the notifications and disconnects, unless the device was
            already connected. Characteristics whose flags allow no write or no
            notification are refused before anything is sent.

            USAGE: blectl request <address> <value> --write <uuid> --notify <uuid>
                                  [--service <uuid>] [--text] [--response-prefix <hex>]
                                  [--count <n>] [--timeout <seconds>] [--adapter <adapter>]
                                  [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.
              <value>                 The request's bytes: hex (0102ff, 01:02:ff or
                                      0x0102ff), or text with --text.

            OPTIONS:
              --write <uuid>          The characteristic the request is written to.
              --notify <uuid>         The characteristic whose notifications carry the
                                      responses.
              -s, --service <uuid>    The service both characteristics are in, when their
                                      UUIDs occur in several services.
              --text                  Take <value> as UTF-8 text instead of hex bytes.
              --response-prefix <hex>
                                      Only notifications that start with these bytes are
                                      responses; without it, every notification is.
              --count <n>             Responses to wait for, 1 to 1000. (default: 1)
              -t, --timeout <seconds>
                                      Give up after this many seconds, connecting included;
                                      decimals allowed, more than 0. (default: 20)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func disconnectHelpExactly() throws {
        let text = try #require(helpText(["disconnect", "--help"]))
        #expect(text == """
            OVERVIEW: Disconnect a device, whoever connected it.

            Asks BlueZ to disconnect the device and waits until the link is down. A device
            that is not connected, or that BlueZ does not know, is left alone: that is
            success too (was_connected false). blectl never scans for it: a device BlueZ
            does not know has no link to close.

            USAGE: blectl disconnect <address> [--timeout <seconds>] [--adapter <adapter>]
                                     [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up waiting for BlueZ after this many seconds;
                                      decimals allowed. (default: 20)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func pairHelpExactly() throws {
        let text = try #require(helpText(["pair", "--help"]))
        #expect(text == """
            OVERVIEW: Pair with a device, and print its pairing state.

            Finds the device (scanning if BlueZ does not know it), registers a pairing
            agent of blectl's own (NoInputNoOutput, or KeyboardOnly with --passkey) and
            asks BlueZ to pair, which connects the device if needed; a link the pairing
            opened is closed at the end. A device paired already is left as it is
            (success). A failed pairing, such as a wrong passkey, exits 77
            (authentication_failed).

            USAGE: blectl pair <address> [--timeout <seconds>] [--trust]
                               [--passkey <passkey>] [--adapter <adapter>]
                               [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds, connecting included;
                                      decimals allowed, more than 0. (default: 20)
              --trust                 Also mark the device trusted (Device1.Trusted), so
                                      that BlueZ lets it connect without asking.
              --passkey <passkey>     The passkey the device displays, 0 to 999999:
                                      blectl's agent types it when BlueZ asks. Without it,
                                      Just Works only.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func unpairHelpExactly() throws {
        let text = try #require(helpText(["unpair", "--help"]))
        #expect(text == """
            OVERVIEW: Remove a device and its pairing from BlueZ.

            Asks BlueZ to remove the device (Adapter1.RemoveDevice): its pairing and keys
            go with it, and a connected device is disconnected first, whoever connected it.
            A device BlueZ does not know, because it never saw it or it was removed
            already, exits 2 (device_not_found); blectl does not scan for it.

            USAGE: blectl unpair <address> [--timeout <seconds>] [--adapter <adapter>]
                                 [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds; decimals allowed.
                                      (default: 20)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func notifyHelpExactly() throws {
        let text = try #require(helpText(["notify", "--help"]))
        #expect(text == """
            OVERVIEW: Print the notifications of a characteristic.

            Subscribes to the characteristic's notifications (or indications) and prints
            one JSON line per value as it arrives, in order, each with a sequence number
            from 1 and the time it was received. Ends with success at the timeout or after
            --count values. The timeout counts from the start: running out before the
            subscription is set up exits 124 naming the stage. Without --reconnect, a lost
            link ends the command with status 4 after the values received.

            USAGE: blectl notify <address> <characteristic> [--service <uuid>]
                                 [--timeout <seconds>] [--count <n>] [--reconnect]
                                 [--adapter <adapter>] [--format <format>] [--verbose ...]
                                 [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.
              <characteristic>        The characteristic's UUID: 16-bit (2a19), 32-bit or
                                      128-bit.

            OPTIONS:
              -s, --service <uuid>    The service the characteristic is in, when its UUID
                                      occurs in several services.
              -t, --timeout <seconds>
                                      Stop after this many seconds, connecting included;
                                      decimals allowed, more than 0, inf for no limit.
                                      (default: 10)
              --count <n>             Stop after this many values; if the timeout comes
                                      first, exit 124.
              --reconnect             When the link drops, reconnect within the timeout and
                                      go on; losses and reconnections are reported on
                                      standard error.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
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
        ("64", "Usage error."),
        ("69", "Bluetooth unavailable: no bluetoothd, no adapter, powered off, rfkill."),
        ("70", "Internal error."),
        ("74", "Writing standard output failed (a full disk, an I/O error)."),
        ("77", "Permission denied by the D-Bus policy, or pairing wanted by the device."),
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
        #expect(text.contains("\nARGUMENTS:\n  <address>               The device's address, like C0:FF:EE:00:00:01.\n"))
        #expect(text.contains("USAGE: blectl get-battery <address> [--timeout <seconds>]\n"))
        #expect(text.contains("[--vendor-service <uuid> --vendor-write <uuid>\n"))
    }

    @Test func infoHelpExactly() throws {
        let text = try #require(helpText(["info", "--help"]))
        #expect(text == """
            OVERVIEW: Show what BlueZ knows about a device.

            Prints the device's org.bluez.Device1 properties (and Battery1's percentage) as
            one object, null where BlueZ has no value, without connecting. A device BlueZ
            does not know is looked for by scanning until the timeout (exit 2 if it is not
            heard; scanning needs a powered adapter, else exit 69); one BlueZ knows is
            printed even when the adapter is powered off. Without --adapter: the first
            powered adapter, else the first one.

            USAGE: blectl info <address> [--timeout <seconds>] [--adapter <adapter>]
                               [--format <format>] [--verbose ...] [--quiet]

            ARGUMENTS:
              <address>               The device's address, like C0:FF:EE:00:00:01.

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds, scanning for a
                                      device BlueZ does not know included; decimals
                                      allowed. (default: 10)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func devicesHelpExactly() throws {
        let text = try #require(helpText(["devices", "--help"]))
        #expect(text == """
            OVERVIEW: List the devices BlueZ knows, without scanning.

            Prints one JSON line per device BlueZ has under the adapter, as info prints it,
            ordered by address: devices heard earlier and still cached, paired ones,
            connected ones, whether in range or not. Nothing is scanned or connected, and
            the adapter may be powered off; without --adapter: the first powered adapter,
            else the first one. With --format text, a table; its FLAGS column shows P
            paired, B bonded, T trusted, X blocked, C connected, R services resolved (- no,
            ? unknown).

            USAGE: blectl devices [--timeout <seconds>] [--connected] [--paired]
                                  [--adapter <adapter>] [--format <format>] [--verbose ...]
                                  [--quiet]

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds; decimals allowed.
                                      (default: 10)
              --connected             Only list devices that are connected.
              --paired                Only list devices that are paired. With --connected,
                                      only devices that are both.
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }

    @Test func adaptersHelpExactly() throws {
        let text = try #require(helpText(["adapters", "--help"]))
        #expect(text == """
            OVERVIEW: List the Bluetooth adapters, powered or not.

            Prints one JSON line per adapter (org.bluez.Adapter1), ordered by object path;
            with --adapter, only that one (exit 69 if BlueZ has no such adapter). No
            adapter needs to be powered; when bluetoothd runs but has no adapter, nothing
            is printed and the exit status is 0.

            USAGE: blectl adapters [--timeout <seconds>] [--adapter <adapter>]
                                   [--format <format>] [--verbose ...] [--quiet]

            OPTIONS:
              -t, --timeout <seconds>
                                      Give up after this many seconds; decimals allowed.
                                      (default: 10)
              --adapter <adapter>     Bluetooth adapter to use, like hci0; without it, the
                                      first powered adapter.
              -f, --format <format>   Output format: json or text. (default: json)
              -v, --verbose           Trace on stderr every D-Bus call blectl makes, its
                                      reply and every signal it acts on; twice (-vv), every
                                      signal received, dropped ones too.
              -q, --quiet             No progress line on stderr when it is a terminal.
              -h, --help              Show help information.

            """)
    }
}
