import Testing
@testable import BlectlCLI

@Suite("parseCommandLine: usage errors")
struct UsageErrorTests {
    static let timeoutExpectation = "expected a number of seconds (decimals allowed), 0 or more"
    /// For the commands that need a connection, which refuse 0.
    static let connectionTimeoutExpectation = "expected a number of seconds (decimals allowed), more than 0"
    /// The commands that listen (scan, notify) also take `inf`.
    static let listeningTimeoutExpectation = "expected a number of seconds (decimals allowed), 0 or more, or inf"
    static let uuidExpectation =
        "expected 16-bit (180f, 0x180F), 32-bit (0000180f) or 128-bit (0000180f-0000-1000-8000-00805f9b34fb) form"
    static let addressExpectation = "expected six hex pairs like C0:FF:EE:00:00:01"
    /// Every subcommand declared, in `help`'s order (HelpTextTests holds the list by hand).
    static let missingSubcommand = "Missing subcommand: expected "
        + Blectl.spec.subcommands.dropLast().map(\.name).joined(separator: ", ") + " or " + Blectl.spec.subcommands.last!.name

    struct Case: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var message: String
        var subcommand: String?
        var testDescription: String { arguments.description }
    }

    @Test("exact messages", arguments: [
        // Unknown options, subcommands and arguments
        Case(arguments: ["scan", "--frobnicate"], message: "Unknown option '--frobnicate'", subcommand: "scan"),
        Case(arguments: ["scan", "--frobnicate=3"], message: "Unknown option '--frobnicate'", subcommand: "scan"),
        Case(arguments: ["--frobnicate"], message: "Unknown option '--frobnicate'", subcommand: nil),
        Case(arguments: ["scan", "-x"], message: "Unknown option '-x'", subcommand: "scan"),
        Case(arguments: ["scan", "-xh"], message: "Unknown option '-x'", subcommand: "scan"),
        Case(arguments: ["scan", "---timeout", "5"], message: "Unknown option '---timeout'", subcommand: "scan"),
        Case(arguments: ["--timeout", "5", "scan"], message: "Unknown option '--timeout'", subcommand: nil),
        Case(arguments: ["connect", sampleAddress, "--updates"], message: "Unknown option '--updates'", subcommand: "connect"),
        Case(arguments: ["scan", "--vendor-service", "180f"], message: "Unknown option '--vendor-service'", subcommand: "scan"),
        Case(arguments: ["scan", "--version"], message: "Unknown option '--version'", subcommand: "scan"),
        Case(arguments: ["scan", "--Timeout", "5"], message: "Unknown option '--Timeout'", subcommand: "scan"),
        Case(arguments: ["help", "--format", "text"], message: "Unknown option '--format'", subcommand: "help"),
        Case(arguments: ["frob"], message: "Unknown subcommand 'frob'", subcommand: nil),
        Case(arguments: ["Scan"], message: "Unknown subcommand 'Scan'", subcommand: nil),
        Case(arguments: [""], message: "Unknown subcommand ''", subcommand: nil),
        Case(arguments: ["help", "frob"], message: "Unknown subcommand 'frob'", subcommand: "help"),
        Case(arguments: ["scan", "foo"], message: "Unexpected argument 'foo'", subcommand: "scan"),
        Case(arguments: ["scan", "--", "--updates"], message: "Unexpected argument '--updates'", subcommand: "scan"),
        Case(arguments: ["connect", sampleAddress, "extra"], message: "Unexpected argument 'extra'", subcommand: "connect"),
        Case(arguments: ["help", "scan", "extra"], message: "Unexpected argument 'extra'", subcommand: "help"),
        Case(arguments: [], message: missingSubcommand, subcommand: nil),
        Case(arguments: ["--format", "text"], message: missingSubcommand, subcommand: nil),

        Case(arguments: ["info", sampleAddress, "--connected"], message: "Unknown option '--connected'", subcommand: "info"),
        Case(arguments: ["info", sampleAddress, "extra"], message: "Unexpected argument 'extra'", subcommand: "info"),
        Case(arguments: ["devices", sampleAddress], message: "Unexpected argument 'C0:FF:EE:00:00:01'", subcommand: "devices"),
        Case(arguments: ["devices", "--name", "x"], message: "Unknown option '--name'", subcommand: "devices"),
        Case(arguments: ["adapters", "hci0"], message: "Unexpected argument 'hci0'", subcommand: "adapters"),
        Case(arguments: ["adapters", "--paired"], message: "Unknown option '--paired'", subcommand: "adapters"),

        // Missing values and arguments
        Case(arguments: ["scan", "--timeout"], message: "Missing value for '--timeout'", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "--updates"], message: "Missing value for '--timeout'", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "--", "5"], message: "Missing value for '--timeout'", subcommand: "scan"),
        Case(arguments: ["scan", "--name", "-x"], message: "Missing value for '--name'", subcommand: "scan"),
        Case(arguments: ["scan", "--adapter"], message: "Missing value for '--adapter'", subcommand: "scan"),
        Case(arguments: ["--format"], message: "Missing value for '--format'", subcommand: nil),
        Case(arguments: ["connect"], message: "Missing expected argument '<address>'", subcommand: "connect"),
        Case(arguments: ["version", "--timeout", "5"], message: "Missing expected argument '<address>'", subcommand: "get-version"),
        Case(arguments: ["battery"], message: "Missing expected argument '<address>'", subcommand: "get-battery"),
        Case(arguments: ["info", "--timeout", "5"], message: "Missing expected argument '<address>'", subcommand: "info"),
        Case(arguments: ["info", "--timeout"], message: "Missing value for '--timeout'", subcommand: "info"),

        // Repeated or misused options
        Case(arguments: ["scan", "--timeout", "1", "--timeout", "2"], message: "Option '--timeout' cannot be repeated", subcommand: "scan"),
        Case(arguments: ["scan", "--updates", "--updates"], message: "Option '--updates' cannot be repeated", subcommand: "scan"),
        Case(arguments: ["scan", "--rssi-min", "-70", "--rssi-min=-60"], message: "Option '--rssi-min' cannot be repeated", subcommand: "scan"),
        Case(arguments: ["--format", "json", "scan", "--format", "text"], message: "Option '--format' cannot be repeated", subcommand: "scan"),
        Case(arguments: ["--adapter", "hci0", "--adapter", "hci1", "scan"], message: "Option '--adapter' cannot be repeated", subcommand: nil),
        Case(arguments: ["connect", sampleAddress, "--timeout=1", "--timeout=1"], message: "Option '--timeout' cannot be repeated", subcommand: "connect"),
        Case(arguments: ["scan", "--updates=yes"], message: "Option '--updates' takes no value", subcommand: "scan"),
        Case(arguments: ["scan", "--updates="], message: "Option '--updates' takes no value", subcommand: "scan"),
        Case(arguments: ["--version=1"], message: "Option '--version' takes no value", subcommand: nil),
        Case(arguments: ["devices", "--paired", "--paired"], message: "Option '--paired' cannot be repeated", subcommand: "devices"),
        Case(arguments: ["devices", "--connected=yes"], message: "Option '--connected' takes no value", subcommand: "devices"),

        // Timeouts
        Case(arguments: ["scan", "--timeout", "xyz"], message: "Invalid value 'xyz' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "-1"], message: "Invalid value '-1' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout=-0.5"], message: "Invalid value '-0.5' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "-.5"], message: "Invalid value '-.5' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "NaN"], message: "Invalid value 'NaN' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "nan"], message: "Invalid value 'nan' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        // inf only where a command listens (scan, notify): elsewhere a limit is a limit.
        Case(arguments: ["connect", sampleAddress, "--timeout", "inf"], message: "Invalid value 'inf' for '--timeout': \(connectionTimeoutExpectation)", subcommand: "connect"),
        Case(arguments: ["get-battery", sampleAddress, "--timeout=inf"], message: "Invalid value 'inf' for '--timeout': \(connectionTimeoutExpectation)", subcommand: "get-battery"),
        Case(arguments: ["scan", "--timeout", "INF"], message: "Invalid value 'INF' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "-inf"], message: "Missing value for '--timeout'", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "infinity"], message: "Invalid value 'infinity' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "1e999"], message: "Invalid value '1e999' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "1e3"], message: "Invalid value '1e3' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "0x10"], message: "Invalid value '0x10' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "+5"], message: "Invalid value '+5' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", " 5"], message: "Invalid value ' 5' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "5s"], message: "Invalid value '5s' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "1,5"], message: "Invalid value '1,5' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "1.2.3"], message: "Invalid value '1.2.3' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "."], message: "Invalid value '.' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "٣"], message: "Invalid value '٣' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", ""], message: "Invalid value '' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout="], message: "Invalid value '' for '--timeout': \(listeningTimeoutExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "86400.000000000000000001"], message: "Invalid value '86400.000000000000000001' for '--timeout': expected at most 86400 seconds (one day), or inf", subcommand: "scan"),
        Case(arguments: ["scan", "--timeout", "86401"], message: "Invalid value '86401' for '--timeout': expected at most 86400 seconds (one day), or inf", subcommand: "scan"),
        Case(arguments: ["info", sampleAddress, "--timeout", "-1"], message: "Invalid value '-1' for '--timeout': \(timeoutExpectation)", subcommand: "info"),
        Case(arguments: ["devices", "--timeout", "1e3"], message: "Invalid value '1e3' for '--timeout': \(timeoutExpectation)", subcommand: "devices"),
        Case(arguments: ["adapters", "--timeout=86401"], message: "Invalid value '86401' for '--timeout': expected at most 86400 seconds (one day)", subcommand: "adapters"),
        Case(arguments: ["connect", sampleAddress, "--timeout", "99999999999999999999999"], message: "Invalid value '99999999999999999999999' for '--timeout': expected at most 86400 seconds (one day)", subcommand: "connect"),

        // Addresses
        Case(arguments: ["connect", "xx"], message: "Invalid address 'xx': \(addressExpectation)", subcommand: "connect"),
        Case(arguments: ["connect", ""], message: "Invalid address '': \(addressExpectation)", subcommand: "connect"),
        Case(arguments: ["connect", "C0-FF-EE-00-00-01"], message: "Invalid address 'C0-FF-EE-00-00-01': \(addressExpectation)", subcommand: "connect"),
        Case(arguments: ["version", "C0:FF:EE:00:00"], message: "Invalid address 'C0:FF:EE:00:00': \(addressExpectation)", subcommand: "get-version"),
        Case(arguments: ["battery", "C0:FF:EE:00:00:0G"], message: "Invalid address 'C0:FF:EE:00:00:0G': \(addressExpectation)", subcommand: "get-battery"),
        Case(arguments: ["connect", "-"], message: "Invalid address '-': \(addressExpectation)", subcommand: "connect"),
        Case(arguments: ["info", "c0:ff:ee:00:00"], message: "Invalid address 'c0:ff:ee:00:00': \(addressExpectation)", subcommand: "info"),
        Case(arguments: ["connect", "-5"], message: "Invalid address '-5': \(addressExpectation)", subcommand: "connect"),
        Case(arguments: ["connect", "a\nb"], message: "Invalid address 'a\\nb': \(addressExpectation)", subcommand: "connect"),

        // UUIDs
        Case(arguments: ["scan", "--service", "zz"], message: "Invalid UUID 'zz' for '--service': \(uuidExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--service", ""], message: "Invalid UUID '' for '--service': \(uuidExpectation)", subcommand: "scan"),
        Case(arguments: ["scan", "--service", "180f", "--service", "18f"], message: "Invalid UUID '18f' for '--service': \(uuidExpectation)", subcommand: "scan"),
        Case(arguments: ["version", sampleAddress, "--vendor-service", "x", "--vendor-write", "1", "--vendor-notify", "2"],
             message: "Invalid UUID 'x' for '--vendor-service': \(uuidExpectation)", subcommand: "get-version"),
        Case(arguments: ["battery", sampleAddress, "--vendor-service", "180f", "--vendor-write", "2a19", "--vendor-notify", "0000180f00001000800000805f9b34fb"],
             message: "Invalid UUID '0000180f00001000800000805f9b34fb' for '--vendor-notify': \(uuidExpectation)", subcommand: "get-battery"),

        // Vendor options: all three or none
        Case(arguments: ["get-version", sampleAddress, "--vendor-service", "180f"],
             message: "Missing '--vendor-write' and '--vendor-notify': give all of '--vendor-service', '--vendor-write' and '--vendor-notify', or none",
             subcommand: "get-version"),
        Case(arguments: ["battery", sampleAddress, "--vendor-write", "1234", "--vendor-notify", "1235"],
             message: "Missing '--vendor-service': give all of '--vendor-service', '--vendor-write' and '--vendor-notify', or none",
             subcommand: "get-battery"),
        Case(arguments: ["version", sampleAddress, "--vendor-notify", "1235"],
             message: "Missing '--vendor-service' and '--vendor-write': give all of '--vendor-service', '--vendor-write' and '--vendor-notify', or none",
             subcommand: "get-version"),

        // The GATT toolbox
        Case(arguments: ["read", sampleAddress], message: "Missing expected argument '<characteristic>'", subcommand: "read"),
        Case(arguments: ["read", sampleAddress, "2a1"], message: "Invalid UUID '2a1': \(uuidExpectation)", subcommand: "read"),
        Case(arguments: ["read", sampleAddress, "2a19", "--descriptor", "x"], message: "Invalid UUID 'x' for '--descriptor': \(uuidExpectation)", subcommand: "read"),
        Case(arguments: ["read", sampleAddress, "2a19", "--offset", "65536"],
             message: "Invalid value '65536' for '--offset': expected a whole number of bytes from 0 to 65535", subcommand: "read"),
        Case(arguments: ["read", sampleAddress, "2a19", "--offset", "+1"],
             message: "Invalid value '+1' for '--offset': expected a whole number of bytes from 0 to 65535", subcommand: "read"),
        Case(arguments: ["read", sampleAddress, "2a19", "--offset=0x10"],
             message: "Invalid value '0x10' for '--offset': expected a whole number of bytes from 0 to 65535", subcommand: "read"),
        Case(arguments: ["read", sampleAddress, "2a19", "--offset", "-1"],
             message: "Invalid value '-1' for '--offset': expected a whole number of bytes from 0 to 65535", subcommand: "read"),
        Case(arguments: ["write", sampleAddress, "2a19"], message: "Missing expected argument '<value>' (or --file)", subcommand: "write"),
        Case(arguments: ["write", sampleAddress, "2a19", "0g"],
             message: "Invalid value '0g': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)", subcommand: "write"),
        Case(arguments: ["write", sampleAddress, "2a19", "012"],
             message: "Invalid value '012': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)", subcommand: "write"),
        Case(arguments: ["write", sampleAddress, "2a19", "", "--text"],
             message: "Invalid value '': expected text of 1 to 512 bytes in UTF-8", subcommand: "write"),
        Case(arguments: ["write", sampleAddress, "2a19", String(repeating: "x", count: 513), "--text"],
             message: "Invalid value '\(String(repeating: "x", count: 32))…' (513 characters): expected text of 1 to 512 bytes in UTF-8", subcommand: "write"),
        // A long value is cut in the message (its length said), never repeated whole.
        Case(arguments: ["write", sampleAddress, "2a19", String(repeating: "01", count: 513)],
             message: "Invalid value '\(String(repeating: "01", count: 16))…' (1026 characters): expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)", subcommand: "write"),
        Case(arguments: ["write", sampleAddress, "2a19", String(repeating: "0g", count: 32)],
             message: "Invalid value '\(String(repeating: "0g", count: 32))': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)", subcommand: "write"),
        Case(arguments: ["write", sampleAddress, "2a19", "01", "02"], message: "Unexpected argument '02'", subcommand: "write"),
        Case(arguments: ["write", sampleAddress, "2a19", "01", "--without-response=1"],
             message: "Option '--without-response' takes no value", subcommand: "write"),
        Case(arguments: ["request", sampleAddress, "01", "--notify", "2a19"], message: "Missing expected argument '--write <uuid>'", subcommand: "request"),
        Case(arguments: ["request", sampleAddress, "01", "--write", "2a19"], message: "Missing expected argument '--notify <uuid>'", subcommand: "request"),
        Case(arguments: ["request", sampleAddress, "--write", "2a19", "--notify", "2a19"], message: "Missing expected argument '<value>'", subcommand: "request"),
        Case(arguments: ["request", sampleAddress, "01", "--write", "2a19", "--notify", "2a19", "--count", "0"],
             message: "Invalid value '0' for '--count': expected a whole number from 1 to 1000", subcommand: "request"),
        Case(arguments: ["request", sampleAddress, "01", "--write", "2a19", "--notify", "2a19", "--count", "1001"],
             message: "Invalid value '1001' for '--count': expected a whole number from 1 to 1000", subcommand: "request"),
        Case(arguments: ["request", sampleAddress, "01", "--write", "2a19", "--notify", "2a19", "--response-prefix", "8"],
             message: "Invalid value '8' for '--response-prefix': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)",
             subcommand: "request"),
        Case(arguments: ["request", sampleAddress, "0x", "--write", "2a19", "--notify", "2a19"],
             message: "Invalid value '0x': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)", subcommand: "request"),
        Case(arguments: ["disconnect"], message: "Missing expected argument '<address>'", subcommand: "disconnect"),
        Case(arguments: ["disconnect", sampleAddress, "2a19"], message: "Unexpected argument '2a19'", subcommand: "disconnect"),
        Case(arguments: ["disconnect", sampleAddress, "--service", "180f"], message: "Unknown option '--service'", subcommand: "disconnect"),

        // Other values
        Case(arguments: ["scan", "--name", ""], message: "Invalid value '' for '--name': expected a non-empty part of a device name", subcommand: "scan"),
        Case(arguments: ["scan", "--name", "ok", "--name="], message: "Invalid value '' for '--name': expected a non-empty part of a device name", subcommand: "scan"),
        Case(arguments: ["scan", "--rssi-min", "-128"], message: "Invalid value '-128' for '--rssi-min': expected a whole number of dBm from -127 to 20", subcommand: "scan"),
        Case(arguments: ["scan", "--rssi-min", "21"], message: "Invalid value '21' for '--rssi-min': expected a whole number of dBm from -127 to 20", subcommand: "scan"),
        Case(arguments: ["scan", "--rssi-min", "-70.5"], message: "Invalid value '-70.5' for '--rssi-min': expected a whole number of dBm from -127 to 20", subcommand: "scan"),
        Case(arguments: ["scan", "--rssi-min", "99999"], message: "Invalid value '99999' for '--rssi-min': expected a whole number of dBm from -127 to 20", subcommand: "scan"),
        Case(arguments: ["scan", "--rssi-min", ""], message: "Invalid value '' for '--rssi-min': expected a whole number of dBm from -127 to 20", subcommand: "scan"),
        Case(arguments: ["--format", "xml", "scan"], message: "Invalid value 'xml' for '--format': expected json or text", subcommand: "scan"),
        Case(arguments: ["scan", "--format", "JSON"], message: "Invalid value 'JSON' for '--format': expected json or text", subcommand: "scan"),
        Case(arguments: ["scan", "--format="], message: "Invalid value '' for '--format': expected json or text", subcommand: "scan"),
        Case(arguments: ["--adapter", "foo", "scan"], message: "Invalid value 'foo' for '--adapter': expected an adapter name like hci0", subcommand: "scan"),
        Case(arguments: ["scan", "--adapter", "hci"], message: "Invalid value 'hci' for '--adapter': expected an adapter name like hci0", subcommand: "scan"),
        Case(arguments: ["scan", "--adapter", "HCI0"], message: "Invalid value 'HCI0' for '--adapter': expected an adapter name like hci0", subcommand: "scan"),
        Case(arguments: ["scan", "--adapter", "hci0 "], message: "Invalid value 'hci0 ' for '--adapter': expected an adapter name like hci0", subcommand: "scan"),
        Case(arguments: ["scan", "--adapter", "hci-1"], message: "Invalid value 'hci-1' for '--adapter': expected an adapter name like hci0", subcommand: "scan"),
        Case(arguments: ["scan", "--adapter", "/org/bluez/hci0"], message: "Invalid value '/org/bluez/hci0' for '--adapter': expected an adapter name like hci0", subcommand: "scan"),
        Case(arguments: ["scan", "--adapter="], message: "Invalid value '' for '--adapter': expected an adapter name like hci0", subcommand: "scan"),
        Case(arguments: ["adapters", "--adapter", "hci"], message: "Invalid value 'hci' for '--adapter': expected an adapter name like hci0", subcommand: "adapters"),
    ])
    func exactMessage(testCase: Case) throws {
        let error = try #require(usageError(testCase.arguments))
        #expect(error.message == testCase.message)
        #expect(error.subcommand == testCase.subcommand)
    }

    @Test func firstProblemOnTheLineIsReported() {
        #expect(usageError(["scan", "--frobnicate", "--timeout"])?.message == "Unknown option '--frobnicate'")
        #expect(usageError(["scan", "--timeout", "1", "--timeout", "x", "--bogus"])?.message == "Option '--timeout' cannot be repeated")
    }

    @Test func renderForSubcommand() throws {
        let error = try #require(usageError(["connect", "--frobnicate"]))
        #expect(renderUsageError(error) == """
            Error: Unknown option '--frobnicate'
            Usage: blectl connect <address> [--timeout <seconds>] [--retries <n>]
                                  [--values] [--adapter <adapter>] [--format <format>]
                                  [--verbose ...] [--quiet]
              See 'blectl connect --help' for more information.

            """)
    }

    @Test func renderForAlias() throws {
        let error = try #require(usageError(["version"]))
        #expect(renderUsageError(error) == """
            Error: Missing expected argument '<address>'
            Usage: blectl get-version <address> ... [--timeout <seconds>] [--retries <n>]
                                      [--vendor-service <uuid> --vendor-write <uuid>
                                      --vendor-notify <uuid>] [--from <path>]
                                      [--parallel <count>] [--overall-timeout <seconds>]
                                      [--adapter <adapter>] [--format <format>]
                                      [--verbose ...] [--quiet]
              See 'blectl get-version --help' for more information.

            """)
    }

    @Test func renderForTopLevel() throws {
        let error = try #require(usageError([]))
        #expect(renderUsageError(error) == """
            Error: \(Self.missingSubcommand)
            Usage: blectl [--adapter <adapter>] [--format <format>] [--verbose ...]
                          [--quiet] <subcommand>
              See 'blectl --help' for more information.

            """)
    }

    @Test func renderForRequestShowsItsRequiredOptions() throws {
        let error = try #require(usageError(["request", sampleAddress, "01"]))
        #expect(renderUsageError(error) == """
            Error: Missing expected argument '--write <uuid>'
            Usage: blectl request <address> <value> --write <uuid> --notify <uuid>
                                  [--service <uuid>] [--text] [--response-prefix <hex>]
                                  [--count <n>] [--timeout <seconds>] [--retries <n>]
                                  [--adapter <adapter>] [--format <format>] [--verbose ...]
                                  [--quiet]
              See 'blectl request --help' for more information.

            """)
    }

    @Test func renderForHelpSubcommand() {
        #expect(renderUsageError(UsageError("Unknown subcommand 'frob'", subcommand: "help")) == """
            Error: Unknown subcommand 'frob'
            Usage: blectl help [<subcommand>]
              See 'blectl help --help' for more information.

            """)
    }

    @Test func renderWithUnknownSubcommandFallsBackToTopLevel() {
        let rendered = renderUsageError(UsageError("Something", subcommand: "nonexistent"))
        #expect(rendered.contains("Usage: blectl [--adapter <adapter>] [--format <format>] [--verbose ...]\n              [--quiet] <subcommand>\n"))
        #expect(rendered.hasSuffix("  See 'blectl --help' for more information.\n"))
    }

    @Test("hostile input never traps and always gives help or a usage error", arguments: [
        ["-"], ["--"], ["--", "--"], ["-", "-"], ["="], ["--="], ["--=x"], ["-="], ["-h="],
        ["scan", "="], ["scan", "--="], ["scan", "--timeout=="], ["scan", "--name", "--"],
        [String(repeating: "a", count: 100_000)], ["scan", "--timeout", String(repeating: "9", count: 10_000)],
        ["scan", "--timeout", "0." + String(repeating: "1", count: 10_000) + "x"],
        ["connect", String(repeating: ":", count: 17)], ["connect", "\u{0}"], ["\u{0}"],
        ["scan", "--rssi-min", "-"], ["scan", "--rssi-min", "--"], ["scan", "--service", "0x"],
        ["connect", "C0:FF:EE:00:00:01", "C0:FF:EE:00:00:02"], ["help", "help", "help"],
        ["--help=yes"], ["-hh"], ["--h"], ["-help"], ["scan", "--timeout", "١٢"],
    ])
    func neverTraps(arguments: [String]) {
        switch parseCommandLine(arguments) {
        case .success(.help), .failure:
            break
        case .success(let other):
            Issue.record("unexpectedly parsed \(arguments) as \(other)")
        }
    }

    @Test func controlCharactersAreEscapedInMessages() throws {
        let error = try #require(usageError(["scan", "--name", "ok", "\u{1b}[31mred\r"]))
        #expect(error.message == "Unexpected argument '\\u{1b}[31mred\\r'")
        #expect(!renderUsageError(error).contains("\u{1b}"))
    }
}
