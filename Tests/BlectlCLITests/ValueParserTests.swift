import Testing
@testable import BlectlCLI
import BlueZKit

@Suite("Value parsers")
struct ValueParserTests {
    @Test("seconds: exact decimal conversion", arguments: [
        ("0", Duration.zero),
        ("10", .seconds(10)),
        ("0.25", .milliseconds(250)),
        ("1.000001", .microseconds(1_000_001)),
        ("86399.999999999999999999", Duration(secondsComponent: 86_399, attosecondsComponent: 999_999_999_999_999_999)),
        ("00000000000000000000001", .seconds(1)),
    ])
    func seconds(text: String, expected: Duration) throws {
        #expect(try ValueParser<Duration>.seconds.parse(text) == expected)
    }

    @Test("seconds: describe renders what a user would type", arguments: [
        (Duration.seconds(10), "10"),
        (.zero, "0"),
        (.milliseconds(2500), "2.5"),
        (.milliseconds(100), "0.1"),
        (Duration(secondsComponent: 0, attosecondsComponent: 1), "0.000000000000000001"),
    ])
    func describeSeconds(duration: Duration, text: String) throws {
        #expect(ValueParser<Duration>.seconds.describe(duration) == text)
        #expect(try ValueParser<Duration>.seconds.parse(text) == duration)
    }

    @Test func digitsPastTheAttosecondAreDropped() throws {
        let text = "0." + String(repeating: "1", count: 10_000)
        #expect(try ValueParser<Duration>.seconds.parse(text) == Duration(secondsComponent: 0, attosecondsComponent: 111_111_111_111_111_111))
    }

    @Test func secondsRejections() {
        #expect(throws: ExpectedValue("at most 86400 seconds (one day)")) {
            _ = try ValueParser<Duration>.seconds.parse("86400.5")
        }
        #expect(throws: ExpectedValue("a number of seconds (decimals allowed), 0 or more")) {
            _ = try ValueParser<Duration>.seconds.parse("-0")
        }
    }

    @Test("adapter names", arguments: [
        ("hci0", true), ("hci1", true), ("hci42", true), ("hci007", true),
        ("hci", false), ("", false), ("hci0a", false), ("hcia", false), ("xhci0", false), ("Hci0", false), ("hci０", false),
    ])
    func adapterNames(text: String, valid: Bool) {
        #expect((try? ValueParser<String>.adapterName.parse(text)) == (valid ? text : nil))
    }

    @Test func choiceListsEveryCase() throws {
        #expect(OutputFormat.choicesList == "json or text")
        #expect(try ValueParser<OutputFormat>.choice.parse("text") == .text)
        #expect(ValueParser<OutputFormat>.choice.describe(.json) == "json")
    }

    @Test func uuidDescribesShortForm() throws {
        #expect(ValueParser<BluetoothUUID>.uuid.describe(.batteryService) == "180f")
        #expect(try ValueParser<BluetoothUUID>.uuid.parse("0x2A19") == .batteryLevel)
    }

    @Test func listJoining() {
        #expect([String]().joinedAsList() == "")
        #expect(["a"].joinedAsList() == "a")
        #expect(["a", "b"].joinedAsList() == "a and b")
        #expect(["a", "b", "c"].joinedAsList(conjunction: "or") == "a, b or c")
    }

    @Test func quoting() {
        #expect("plain".quotedForMessage == "'plain'")
        #expect("tab\there".quotedForMessage == "'tab\\there'")
        #expect("\u{7f}\u{85}é".quotedForMessage == "'\\u{7f}\\u{85}é'")
    }

    @Test("passkeys: 1 to 6 digits, 0 to 999999", arguments: [
        ("0", UInt32(0)), ("000000", 0), ("42", 42), ("000042", 42), ("123456", 123_456), ("999999", 999_999),
    ])
    func passkeys(text: String, expected: UInt32) throws {
        #expect(try ValueParser<Passkey>.passkey.parse(text) == Passkey(expected))
        #expect(ValueParser<Passkey>.passkey.describe(try #require(Passkey(expected))).count == 6)
    }

    @Test("passkeys: rejected", arguments: ["", "1000000", "0000000", "-1", "+1", " 1", "1 ", "12a", "0x10", "1.0", "١٢٣", "4294967296"])
    func passkeysRejected(text: String) {
        #expect(throws: ExpectedValue("a passkey of up to 6 digits, 0 to 999999")) { try ValueParser<Passkey>.passkey.parse(text) }
    }

    @Test("hex bytes: every accepted spelling", arguments: [
        ("0102ff", [UInt8]([1, 2, 0xFF])), ("01:02:FF", [1, 2, 0xFF]), ("0x0102ff", [1, 2, 0xFF]), ("0X0A", [0x0A]),
        ("01-02", [1, 2]), ("01 02", [1, 2]), ("00", [0]),
    ])
    func hexBytes(text: String, expected: [UInt8]) throws {
        #expect(try ValueParser<[UInt8]>.hexBytes.parse(text) == expected)
    }

    @Test("hex bytes: rejected", arguments: ["", "0", "0x", "012", "0g", "01:2", "01::02", "01:02:", "xyz", "01 02:03", "+1:+2", "+1 +2", "0x+1:02",
                                              String(repeating: "00", count: 513)])
    func hexBytesRejected(text: String) {
        #expect(throws: ExpectedValue.self) { try ValueParser<[UInt8]>.hexBytes.parse(text) }
    }

    @Test("text values: the UTF-8 bytes, 1 to 512 of them")
    func utf8Text() throws {
        #expect(try ValueParser<[UInt8]>.utf8Text.parse("é") == [0xC3, 0xA9])
        #expect(try ValueParser<[UInt8]>.utf8Text.parse(String(repeating: "é", count: 256)).count == 512)
        #expect(throws: ExpectedValue.self) { try ValueParser<[UInt8]>.utf8Text.parse("") }
        #expect(throws: ExpectedValue.self) { try ValueParser<[UInt8]>.utf8Text.parse(String(repeating: "é", count: 256) + "x") }
    }

    @Test("whole numbers: plain decimal digits within the range", arguments: ["0", "7", "007", "65535"])
    func wholeNumbers(text: String) throws {
        #expect(try ValueParser<UInt16>.wholeNumber(in: 0...UInt16.max).parse(text) == UInt16(text)!)
    }

    @Test("whole numbers: rejected", arguments: ["", "-1", "+1", " 1", "1 ", "0x10", "1e3", "1.0", "65536",
                                                 String(repeating: "9", count: 40), "٣"])
    func wholeNumbersRejected(text: String) {
        #expect(throws: ExpectedValue.self) { try ValueParser<UInt16>.wholeNumber(in: 0...UInt16.max).parse(text) }
    }

    @Test("value records: hex and, for clean UTF-8 only, text")
    func valueRecords() {
        #expect(JSONValue.object(Records.value(Array("3.1.4".utf8))).serialized() == #"{"value":"332e312e34","text":"3.1.4"}"#)
        #expect(JSONValue.object(Records.value([0x82, 0x49])).serialized() == #"{"value":"8249","text":null}"#)
        #expect(Records.text(of: Array("é☃".utf8)) == "é☃")
        #expect(Records.text(of: [0x41, 0x00]) == nil)            // C0
        #expect(Records.text(of: [0x1F, 0x41]) == nil)            // C0, first
        #expect(Records.text(of: [0x41, 0x7F]) == nil)            // DEL
        #expect(Records.text(of: [0x20, 0x7E]) == " ~")           // the printable ASCII ends
        #expect(Records.text(of: Array("a\u{85}".utf8)) == nil)  // C1 (NEL)
        #expect(Records.text(of: [0xFF]) == nil)                  // not UTF-8
        #expect(Records.text(of: []) == "")
        // C1 controls are escaped in JSON and neutralised in text, like C0 (a raw CSI clears a terminal).
        #expect(JSONValue.string("A\u{9B}2J").serialized() == #""A\u009b2J""#)
        #expect(JSONValue.string("é").serialized() == "\"é\"")
        #expect(Records.printable("A\u{9B}2J") == "A?2J")
    }
}
