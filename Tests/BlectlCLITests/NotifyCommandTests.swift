import Testing
@testable import BlectlCLI
import BlueZKit

@Suite("notify: parsing, records, --timeout inf")
struct NotifyCommandTests {
    static let address = BluetoothAddress("C0:FF:EE:00:00:04")!

    @Test func defaults() {
        #expect(invocation(["notify", "c0:ff:ee:00:00:04", "2a19"]) == .run(
            GlobalOptions(),
            .notify(NotifyOptions(address: Self.address, characteristic: .batteryLevel, service: nil,
                                  timeout: .seconds(10), count: nil, reconnect: false))
        ))
    }

    @Test func everyOption() {
        let arguments = ["--format", "text", "notify", "C0:FF:EE:00:00:04", "0x2A19", "--service=180f", "--timeout", "2.5",
                         "--count", "10000", "--reconnect", "--adapter", "hci1"]
        #expect(invocation(arguments) == .run(
            GlobalOptions(adapter: "hci1", format: .text),
            .notify(NotifyOptions(address: Self.address, characteristic: .batteryLevel, service: .batteryService,
                                  timeout: .milliseconds(2500), count: 10_000, reconnect: true))
        ))
    }

    @Test("--timeout inf where a command listens", arguments: [["notify", "C0:FF:EE:00:00:04", "2a19"], ["scan"]])
    func timeoutInf(_ command: [String]) throws {
        let parsed = try #require(invocation(command + ["--timeout", "inf"]))
        guard case .run(_, let subcommand) = parsed else { Issue.record("not a run: \(parsed)"); return }
        #expect(subcommand.command.timeout == ListeningTimeout.infinite)
        #expect(invocation(command + ["--timeout=inf"]) == parsed)
    }

    @Test func listeningSecondsParser() throws {
        let parser = ValueParser<Duration>.listeningSeconds()
        #expect(try parser.parse("inf") == ListeningTimeout.infinite)
        #expect(try parser.parse("0.25") == .milliseconds(250))
        #expect(try parser.parse("86400") == .seconds(86_400))
        #expect(parser.describe(ListeningTimeout.infinite) == "inf")
        #expect(parser.describe(.milliseconds(2500)) == "2.5")
        for text in ["Inf", "infinity", "+inf", "inf ", "", "-1", "86401"] {
            #expect(throws: ExpectedValue.self, "\(text.debugDescription)") { _ = try parser.parse(text) }
        }
        #expect(throws: ExpectedValue("at most 86400 seconds (one day), or inf")) { _ = try parser.parse("86400.5") }
        // Longer than any plain timeout, and still something the clocks can add and sleep for.
        #expect(ListeningTimeout.infinite > .seconds(86_400 * 365 * 99))
        #expect(ContinuousClock.now + ListeningTimeout.infinite > ContinuousClock.now)
    }

    @Test func countParser() throws {
        let parser = ValueParser<Int>.count
        #expect(try parser.parse("1") == 1)
        #expect(try parser.parse("007") == 7)
        #expect(try parser.parse("1000000000") == 1_000_000_000)
        for text in ["0", "-1", "+1", "1.0", "1e3", "", " 1", "1000000001", "99999999999999999999999", "x"] {
            #expect(throws: ExpectedValue("a whole number from 1 to 1000000000"), "\(text.debugDescription)") { _ = try parser.parse(text) }
        }
    }

    @Test("usage errors", arguments: [
        (["notify"], "Missing expected argument '<address>'"),
        (["notify", "C0:FF:EE:00:00:04"], "Missing expected argument '<characteristic>'"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "extra"], "Unexpected argument 'extra'"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "--count"], "Missing value for '--count'"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "--count", "0"], "Invalid value '0' for '--count': expected a whole number from 1 to 1000000000"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "--count", "2", "--count", "3"], "Option '--count' cannot be repeated"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "--reconnect", "--reconnect"], "Option '--reconnect' cannot be repeated"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "--timeout", "forever"],
         "Invalid value 'forever' for '--timeout': expected a number of seconds (decimals allowed), more than 0, or inf"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "--service", "x"],
         "Invalid UUID 'x' for '--service': expected 16-bit (180f, 0x180F), 32-bit (0000180f) or 128-bit (0000180f-0000-1000-8000-00805f9b34fb) form"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let error = try #require(usageError(arguments))
        #expect(error.message == message)
        #expect(error.subcommand == "notify")
    }

    @Test func jsonRecord() {
        // 2026-11-30T08:15:02.047Z, with digits past the millisecond that are dropped.
        let value = NotifiedValue(bytes: Array("hi".utf8), connection: 3,
                                  receivedAt: .seconds(1_796_026_502) + .microseconds(47_999))
        let line = NotifyCommand.record(value, seq: 12, address: Self.address, service: .batteryService, characteristic: .batteryLevel).serialized()
        #expect(line == #"{"address":"C0:FF:EE:00:00:04","service":"180f","characteristic":"2a19","value":"6869","text":"hi","decoded":{"name":"Battery Level","undecodable":"trailing bytes"},"seq":12,"time":"2026-11-30T08:15:02.047Z","connection":3}"#)
        let binary = NotifiedValue(bytes: [0x00, 0x1b], connection: 1, receivedAt: .zero)
        #expect(NotifyCommand.record(binary, seq: 1, address: Self.address, service: .batteryService, characteristic: .batteryLevel).serialized()
                == #"{"address":"C0:FF:EE:00:00:04","service":"180f","characteristic":"2a19","value":"001b","text":null,"decoded":{"name":"Battery Level","undecodable":"trailing bytes"},"seq":1,"time":"1970-01-01T00:00:00.000Z","connection":1}"#)
    }

    @Test func jsonLinesAreTheRecords() {
        let layout = NotifyCommand.layout(address: Self.address, service: .batteryService, characteristic: .batteryLevel)
        let cases: [([UInt8], Int, Duration)] = [
            (Array("hi".utf8), 12, .seconds(1_796_026_502) + .microseconds(47_999)),
            ([0x00, 0x1b], 1, .seconds(1_796_026_502) + .milliseconds(999)),     // same second
            ([], 99_999, .seconds(1_796_026_503)),                               // the next second
            (Array("\"q\\ é".utf8), 3, .seconds(951_782_400) + .milliseconds(5)),
            ([0x00, 0x00, 0x27, 0x10], 10_000, .zero),
        ]
        // Appended one after the other to one batch, as notify writes them: each its line.
        var batch = JSONLines()
        var expected = ""
        for (bytes, seq, time) in cases {
            let value = NotifiedValue(bytes: bytes, connection: seq % 3 + 1, receivedAt: time)
            layout.appendLine(NotifyCommand.Line(value: value, seq: seq, format: .format(for: .batteryLevel)), to: &batch)
            expected += NotifyCommand.record(value, seq: seq, address: Self.address, service: .batteryService,
                                             characteristic: .batteryLevel).serialized() + "\n"
        }
        #expect(String(decoding: batch.bytes, as: UTF8.self) == expected)
        #expect(layout.line(NotifyCommand.Line(value: NotifiedValue(bytes: [0x01], connection: 1, receivedAt: .milliseconds(10)), seq: 5))
                == #"{"address":"C0:FF:EE:00:00:04","service":"180f","characteristic":"2a19","value":"01","text":null,"decoded":null,"seq":5,"time":"1970-01-01T00:00:00.010Z","connection":1}"# + "\n")
    }

    @Test func textLine() {
        let value = NotifiedValue(bytes: Array("hi".utf8), connection: 2, receivedAt: .seconds(951_782_400) + .milliseconds(5))
        #expect(NotifyCommand.text(value, seq: 7) == #"2000-02-29T00:00:00.005Z  7      2           6869              "hi"              -"#)
        let binary = NotifiedValue(bytes: [0x90, 0x00], connection: 1, receivedAt: .seconds(86_399) + .milliseconds(999))
        #expect(NotifyCommand.text(binary, seq: 1) == "1970-01-01T23:59:59.999Z  1      1           9000              -                 -")
        let level = NotifiedValue(bytes: [0x57], connection: 1, receivedAt: .zero)
        #expect(NotifyCommand.text(level, seq: 2, format: .format(for: .batteryLevel))
                == "1970-01-01T00:00:00.000Z  2      1           57                \"W\"               Battery Level 87 percentage")
    }

    @Test("RFC 3339 in UTC with milliseconds", arguments: [
        (Duration.zero, "1970-01-01T00:00:00.000Z"),
        (.milliseconds(1), "1970-01-01T00:00:00.001Z"),
        (.seconds(1_700_000_000) + .nanoseconds(123_999_999), "2023-11-14T22:13:20.123Z"),
        (.seconds(4_102_444_799) + .milliseconds(999), "2099-12-31T23:59:59.999Z"),
        (.seconds(253_402_300_799) + .milliseconds(999), "9999-12-31T23:59:59.999Z"),
        (.seconds(253_402_300_800), "10000-01-01T00:00:00.000Z"),
        (.seconds(-1), "1969-12-31T23:59:59.000Z"),
    ])
    func rfc3339(_ instant: Duration, _ text: String) {
        #expect(Records.rfc3339(sinceEpoch: instant) == text)
    }
}
