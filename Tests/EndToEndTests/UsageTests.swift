// The command line as the binary sees it: help and version on stdout with status 0; bad
// input is a usage error (64, plain text on stderr, nothing on stdout) before any
// org.bluez call is made.

import Foundation
import SimulatorHarness
import Testing

/// One simulator shared by the usage tests: no test here may make it do anything, so
/// every test can check that its call log is still empty. It ends with the test process
/// (EOF on its stdin).
enum QuietSimulator {
    private static let started = Result { try Simulator.start(faults: Sim.fastDisconnect) }
    static func get() async throws -> Sim {
        Sim(simulator: try await offThread { try started.get() })
    }
}

@Suite("help, version and usage errors")
struct UsageTests {
    static let timeoutExpected = "expected a number of seconds (decimals allowed), 0 or more"
    /// The commands that need a connection refuse a zero timeout.
    static let connectionTimeoutExpected = "expected a number of seconds (decimals allowed), more than 0"
    static let connectionCommands: Set<String> = ["connect", "get-version", "get-battery", "read", "write", "request", "pair", "notify"]
    static let tooLong = "expected at most 86400 seconds (one day)"
    static let addressExpected = "expected six hex pairs like C0:FF:EE:00:00:01"
    static let uuidExpected = "expected 16-bit (180f, 0x180F), 32-bit (0000180f) or 128-bit (0000180f-0000-1000-8000-00805f9b34fb) form"
    static let dBmExpected = "expected a whole number of dBm from -127 to 20"
    static let passkeyExpected = "expected a passkey of up to 6 digits, 0 to 999999"

    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var message: String
        /// The command in the `See '… --help'` line.
        var helpCommand: String
        var testDescription: String { arguments.map { $0.isEmpty ? "''" : $0 }.joined(separator: " ") }

        init(_ arguments: [String], _ message: String, see helpCommand: String) {
            self.arguments = arguments
            self.message = message
            self.helpCommand = helpCommand
        }

        /// The commands that listen (scan, notify) also take `inf`, and say so.
        static func timeout(_ value: String, _ expected: String? = nil, command: String = "connect") -> Case {
            let expected = expected ?? (UsageTests.connectionCommands.contains(command) ? UsageTests.connectionTimeoutExpected : UsageTests.timeoutExpected)
            let arguments = command == "scan" ? ["scan", "--timeout", value]
                : command == "notify" || command == "read" ? [command, World.probe, "2a19", "--timeout", value]
                : command == "write" ? [command, World.probe, "2a19", "01", "--timeout", value]
                : command == "devices" || command == "adapters" ? [command, "--timeout", value]
                : [command, World.probe, "--timeout", value]
            let listening = ["scan", "notify"].contains(command) ? ", or inf" : ""
            return Case(arguments, "Invalid value '\(value)' for '--timeout': \(expected)\(listening)", see: "blectl \(command)")
        }

        static func address(_ value: String, command: String = "connect", canonical: String = "connect") -> Case {
            Case([command, value], "Invalid address '\(value)': \(UsageTests.addressExpected)", see: "blectl \(canonical)")
        }

        static func service(_ value: String) -> Case {
            Case(["scan", "--service", value], "Invalid UUID '\(value)' for '--service': \(UsageTests.uuidExpected)", see: "blectl scan")
        }
    }

    @Test("bad input: 64, the message and usage on stderr, nothing on stdout, no org.bluez call", arguments: [
        // Malformed addresses
        Case.address("C0:FF:EE:00:00"),
        Case.address("C0:FF:EE:00:00:01:02"),
        Case.address("C0:FF:EE:00:00:0G", command: "get-version", canonical: "get-version"),
        Case.address("GG:FF:EE:00:00:01", command: "battery", canonical: "get-battery"),
        Case.address("C0-FF-EE-00-00-01"),
        Case.address("C0FFEE000001", command: "version", canonical: "get-version"),
        Case.address("C0:FF:EE:00:00:1"),
        Case.address(" C0:FF:EE:00:00:01"),
        Case.address("C0:FF:EE:00:00:01 "),
        Case.address(""),
        // Malformed UUIDs and hex
        Case.service("xyz"),
        Case.service("180"),
        Case.service("0x18zz"),
        Case.service("18 f"),
        Case.service(""),
        Case.service("5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5"),
        Case.service("5a1e00016c2d4b8e9f3a0c1d2e3f4a5b"),
        Case.service("{5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b}"),
        Case(["get-version", World.probe, "--vendor-service", "gggg", "--vendor-write", "180f", "--vendor-notify", "180f"],
             "Invalid UUID 'gggg' for '--vendor-service': \(uuidExpected)", see: "blectl get-version"),
        Case(["get-battery", World.probe, "--vendor-service=180f", "--vendor-write=0x2A19", "--vendor-notify=zz"],
             "Invalid UUID 'zz' for '--vendor-notify': \(uuidExpected)", see: "blectl get-battery"),
        // Negative, NaN, infinite, huge, malformed timeouts
        Case.timeout("-1"),
        Case.timeout("-0.5", command: "scan"),
        Case.timeout("NaN"),
        Case.timeout("nan", command: "scan"),
        Case.timeout("inf"),
        Case.timeout("1e3", command: "get-battery"),
        Case.timeout("0x10"),
        Case.timeout("+1"),
        Case.timeout(" 1"),
        Case.timeout("1.2.3"),
        Case.timeout("."),
        Case.timeout(""),
        Case.timeout("86401", tooLong),
        Case.timeout("86400.001", tooLong, command: "scan"),
        Case.timeout("99999999999999999999999", tooLong, command: "get-version"),
        Case(["scan", "--timeout", "-inf"], "Missing value for '--timeout'", see: "blectl scan"),
        Case.timeout("inf", command: "get-version"),
        Case.timeout("infinity", command: "notify"),
        Case.timeout("86401", tooLong, command: "notify"),
        // A zero limit on a command that needs a connection: refused before the bus is opened.
        Case.timeout("0"),
        Case.timeout("0.0", command: "get-version"),
        Case.timeout("000", command: "get-battery"),
        Case.timeout(".0", command: "read"),
        Case.timeout("0", command: "write"),
        Case.timeout("0", command: "pair"),
        Case.timeout("0", command: "notify"),
        // One grammar for every number: no '+', no '-0', no fraction where whole numbers are
        // wanted, no spaces; '-' only where negative values are (dBm).
        Case.timeout("-0", command: "info"),
        Case.timeout("-0", command: "scan"),
        Case.timeout("+1", command: "scan"),
        Case.timeout("+0.5", command: "devices"),
        Case.timeout("1 ", command: "adapters"),
        Case(["scan", "--rssi-min", "+5"], "Invalid value '+5' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["scan", "--rssi-min", "-0"], "Invalid value '-0' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["scan", "--rssi-min=-00"], "Invalid value '-00' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["scan", "--rssi-min", "-0x10"], "Invalid value '-0x10' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["scan", "--rssi-min=-5 "], "Invalid value '-5 ' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["notify", World.gattBattery, "2a19", "--count", "+3"],
             "Invalid value '+3' for '--count': expected a whole number from 1 to 1000000000", see: "blectl notify"),
        Case(["notify", World.gattBattery, "2a19", "--count", "-0"],
             "Invalid value '-0' for '--count': expected a whole number from 1 to 1000000000", see: "blectl notify"),
        Case(["read", World.probe, "2a19", "--offset", "+1"],
             "Invalid value '+1' for '--offset': expected a whole number of bytes from 0 to 65535", see: "blectl read"),
        Case(["read", World.probe, "2a19", "--offset", "-0"],
             "Invalid value '-0' for '--offset': expected a whole number of bytes from 0 to 65535", see: "blectl read"),
        Case(["read", World.probe, "2a19", "--offset", "1.0"],
             "Invalid value '1.0' for '--offset': expected a whole number of bytes from 0 to 65535", see: "blectl read"),
        // notify's arguments and --count
        Case(["notify", World.gattBattery], "Missing expected argument '<characteristic>'", see: "blectl notify"),
        Case(["notify"], "Missing expected argument '<address>'", see: "blectl notify"),
        Case(["notify", World.gattBattery, "battery"], "Invalid UUID 'battery': \(uuidExpected)", see: "blectl notify"),
        Case(["notify", World.gattBattery, "2a19", "--count", "0"],
             "Invalid value '0' for '--count': expected a whole number from 1 to 1000000000", see: "blectl notify"),
        Case(["notify", World.gattBattery, "2a19", "--count", "-3"],
             "Invalid value '-3' for '--count': expected a whole number from 1 to 1000000000", see: "blectl notify"),
        Case(["notify", World.gattBattery, "2a19", "--count=1.5"],
             "Invalid value '1.5' for '--count': expected a whole number from 1 to 1000000000", see: "blectl notify"),
        Case(["notify", World.gattBattery, "2a19", "--reconnect=yes"], "Option '--reconnect' takes no value", see: "blectl notify"),
        Case(["notify", World.gattBattery, "2a19", "--updates"], "Unknown option '--updates'", see: "blectl notify"),
        // RSSI thresholds
        Case(["scan", "--rssi-min", "-200"], "Invalid value '-200' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["scan", "--rssi-min", "21"], "Invalid value '21' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["scan", "--rssi-min=-60.5"], "Invalid value '-60.5' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        Case(["scan", "--rssi-min", "strong"], "Invalid value 'strong' for '--rssi-min': \(dBmExpected)", see: "blectl scan"),
        // Empty strings
        Case(["scan", "--name", ""], "Invalid value '' for '--name': expected a non-empty part of a device name", see: "blectl scan"),
        Case(["--adapter", "", "scan"], "Invalid value '' for '--adapter': expected an adapter name like hci0", see: "blectl scan"),
        Case(["--format", "", "scan"], "Invalid value '' for '--format': expected json or text", see: "blectl scan"),
        Case([""], "Unknown subcommand ''", see: "blectl"),
        Case(["scan", ""], "Unexpected argument ''", see: "blectl scan"),
        // Unknown options and subcommands, missing and extra arguments
        Case(["scan", "--frobnicate"], "Unknown option '--frobnicate'", see: "blectl scan"),
        Case(["connect", World.probe, "-x"], "Unknown option '-x'", see: "blectl connect"),
        Case(["--frobnicate", "scan"], "Unknown option '--frobnicate'", see: "blectl"),
        Case(["scan", "--version"], "Unknown option '--version'", see: "blectl scan"),
        Case(["connect", World.probe, "--updates"], "Unknown option '--updates'", see: "blectl connect"),
        Case(["frob"], "Unknown subcommand 'frob'", see: "blectl"),
        Case(["help", "frob"], "Unknown subcommand 'frob'", see: "blectl help"),
        Case([], "Missing subcommand: expected scan, connect, get-version, get-battery, read, write, request, notify, disconnect, info, devices, adapters, pair, unpair, advertise, serve, doctor, completions or help", see: "blectl"),
        Case(["connect"], "Missing expected argument '<address>'", see: "blectl connect"),
        Case(["connect", World.probe, World.vendor], "Unexpected argument 'C0:FF:EE:00:00:02'", see: "blectl connect"),
        Case(["scan", "--timeout"], "Missing value for '--timeout'", see: "blectl scan"),
        Case(["scan", "--timeout", "1", "--timeout", "2"], "Option '--timeout' cannot be repeated", see: "blectl scan"),
        Case(["--format", "xml", "scan"], "Invalid value 'xml' for '--format': expected json or text", see: "blectl scan"),
        Case(["--adapter", "bluetooth0", "scan"], "Invalid value 'bluetooth0' for '--adapter': expected an adapter name like hci0", see: "blectl scan"),
        Case(["get-version", World.probe, "--vendor-service", World.vendorService],
             "Missing '--vendor-write' and '--vendor-notify': give all of '--vendor-service', '--vendor-write' and '--vendor-notify', or none",
             see: "blectl get-version"),
        // Usage errors stay plain text in JSON format.
        Case(["--format", "json", "get-battery", "nope"], "Invalid address 'nope': \(addressExpected)", see: "blectl get-battery"),
        // pair and unpair
        Case(["pair", World.probe, "--passkey", "1000000"], "Invalid value '1000000' for '--passkey': \(passkeyExpected)", see: "blectl pair"),
        Case(["pair", World.probe, "--passkey", "12a456"], "Invalid value '12a456' for '--passkey': \(passkeyExpected)", see: "blectl pair"),
        Case(["pair", World.probe, "--passkey=-1"], "Invalid value '-1' for '--passkey': \(passkeyExpected)", see: "blectl pair"),
        Case(["pair", World.probe, "--passkey", ""], "Invalid value '' for '--passkey': \(passkeyExpected)", see: "blectl pair"),
        Case(["pair", World.probe, "--passkey", "0000001"], "Invalid value '0000001' for '--passkey': \(passkeyExpected)", see: "blectl pair"),
        Case(["pair", World.probe, "--trust=yes"], "Option '--trust' takes no value", see: "blectl pair"),
        Case(["pair", "--trust"], "Missing expected argument '<address>'", see: "blectl pair"),
        Case(["unpair", World.probe, "--passkey", "1"], "Unknown option '--passkey'", see: "blectl unpair"),
        Case(["unpair"], "Missing expected argument '<address>'", see: "blectl unpair"),
    ])
    func badInput(_ c: Case) async throws {
        let sim = try await QuietSimulator.get()
        let run = await sim.blectl(c.arguments)
        #expect(run.status == 64, "\(run)")
        #expect(run.stdout == "", "\(run)")
        let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Error: \(c.message)", "\(run.stderr)")
        #expect(lines.count >= 4, "\(run.stderr)")
        #expect(lines.dropFirst().first?.hasPrefix("Usage: blectl") == true, "\(run.stderr)")
        #expect(lines.suffix(2) == ["  See '\(c.helpCommand) --help' for more information.", ""], "\(run.stderr)")
        #expect(J.parse(run.stderr) == nil, "a usage error is not JSON")
        try #expect(await sim.calls() == [], "blectl called org.bluez")
    }

    @Test("--help, -h and help print the same overview on stdout, status 0")
    func topLevelHelp() async throws {
        let sim = try await QuietSimulator.get()
        let runs = [await sim.blectl(["--help"]), await sim.blectl(["-h"]), await sim.blectl(["help"]),
                    await sim.blectl(["--format", "text", "--help"])]
        for run in runs {
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "", "\(run)")
            #expect(run.stdout == runs[0].stdout, "\(run.arguments)")
        }
        let text = runs[0].stdout
        #expect(text.hasPrefix("OVERVIEW: Probe Bluetooth LE devices through BlueZ.\n"), "\(text)")
        #expect(text.contains("USAGE: blectl [--adapter <adapter>] [--format <format>] [--verbose ...]\n              [--quiet] <subcommand>"))
        for line in ["  scan ", "  connect ", "  get-version, version ", "  get-battery, battery ", "  notify ", "  pair ", "  unpair ", "  124 ", "  130 ", "  143 "] {
            #expect(text.contains(line), "help lacks \(line.debugDescription)")
        }
        try #expect(await sim.calls() == [])
    }

    @Test("help <sub>, <sub> --help and <sub> -h print the same text", arguments: [
        ("scan", "scan"), ("connect", "connect"), ("get-version", "get-version"), ("version", "get-version"),
        ("get-battery", "get-battery"), ("battery", "get-battery"), ("notify", "notify"), ("pair", "pair"), ("unpair", "unpair"),
    ])
    func subcommandHelp(_ name: String, _ canonical: String) async throws {
        let sim = try await QuietSimulator.get()
        let address = name == "scan" ? [] : [World.probe]
        let runs = [await sim.blectl(["help", name]), await sim.blectl([name, "--help"]), await sim.blectl([name, "-h"]),
                    await sim.blectl([name] + address + ["--help"]), await sim.blectl(["help", canonical]),
                    // Help wins over errors elsewhere on the line.
                    await sim.blectl([name, "--frobnicate", "--timeout", "NaN", "--help"])]
        for run in runs {
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "", "\(run)")
            #expect(run.stdout == runs[0].stdout, "\(run.arguments)")
        }
        #expect(runs[0].stdout.contains("USAGE: blectl \(canonical)"), "\(runs[0].stdout)")
        #expect(runs[0].stdout.contains("--timeout <seconds>"))
        try #expect(await sim.calls() == [])
    }

    @Test("the binary under test exists (BLECTL_BIN, else beside the test executable)")
    func binaryFound() {
        #expect(FileManager.default.isExecutableFile(atPath: BlectlBinary.path), "no blectl at \(BlectlBinary.path)")
    }

    @Test("--version prints 'blectl 0.1.0'")
    func version() async throws {
        let sim = try await QuietSimulator.get()
        for arguments in [["--version"], ["--format", "text", "--version"]] {
            let run = await sim.blectl(arguments)
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "blectl 0.1.0\n")
            #expect(run.stderr == "")
        }
        try #expect(await sim.calls() == [])
    }

    /// Arguments that are not valid UTF-8 (bash's `$'\xe9'`): refused, never repaired to
    /// U+FFFD and sent (`write --text` would write bytes nobody typed).
    @Test("an argument that is not valid UTF-8: 64 naming the byte, no org.bluez call", arguments: [
        (#""$0" write C0:FF:EE:00:00:01 2a19 --text $'caf\xe9'"#, "Invalid argument 'caf\\xe9': not valid UTF-8 (byte 0xe9 at offset 3)", "blectl write"),
        (#""$0" request C0:FF:EE:00:00:01 --write 2a19 --notify 2a19 --text $'\xff\xfe'"#,
         "Invalid argument '\\xff\\xfe': not valid UTF-8 (byte 0xff at offset 0)", "blectl request"),
        (#""$0" scan --name $'ok\xc3'"#, "Invalid argument 'ok\\xc3': not valid UTF-8 (byte 0xc3 at offset 2)", "blectl scan"),
        // A secret option's value (a bind key pasted with a Latin-1 byte) is never repeated;
        // the offset is within the value, in both spellings.
        (#""$0" scan --bindkey $'C0:FF:EE:00:00:C7=5ec12e7b1d0a4c3f8e6b2d9a7c4f1e03\xa0'"#,
         "Invalid value for '--bindkey': not valid UTF-8 (byte 0xa0 at offset 50)", "blectl scan"),
        (#""$0" info C0:FF:EE:00:00:C7 $'--bindkey=C0:FF:EE:00:00:C7=5ec12e7b1d0a4c3f8e6b2d9a7c4f1e03\xa0'"#,
         "Invalid value for '--bindkey': not valid UTF-8 (byte 0xa0 at offset 50)", "blectl info"),
    ])
    func invalidUTF8(script: String, message: String, helpCommand: String) async throws {
        let sim = try await QuietSimulator.get()
        let simulator = sim.simulator
        let r = try await offThread { simulator.run("/bin/bash", ["-c", script, BlectlBinary.path]) }
        let run = Run(arguments: [script], status: r.status, stdout: r.stdout, stderr: r.stderr)
        #expect(run.status == 64, "\(run)")
        #expect(run.stdout == "", "\(run)")
        let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Error: \(message)", "\(run.stderr)")
        #expect(lines.dropFirst().first?.hasPrefix("Usage: blectl") == true, "\(run.stderr)")
        #expect(lines.suffix(2) == ["  See '\(helpCommand) --help' for more information.", ""], "\(run.stderr)")
        try #expect(await sim.calls() == [], "blectl called org.bluez")
    }
}
