import Foundation
import struct SimulatorHarness.CPUBoundTrait
import Testing
@testable import BlectlCLI

/// JSON output (RFC 8259): exact text for the cases that matter, and, for many random
/// strings, what a JSON parser reads back is the string itself, with no raw control character
/// (C0, DEL or C1) on the line.
@Suite("JSON serialization", .cpuBound)
struct JSONValueTests {
    @Test("exact text", arguments: [
        (JSONValue.null, "null"),
        (.bool(true), "true"),
        (.bool(false), "false"),
        (.int(0), "0"),
        (.int(-61), "-61"),
        (.int(Int.max), "9223372036854775807"),
        (.int(Int.min), "-9223372036854775808"),
        (.double(2.051), "2.051"),
        (.double(.nan), "null"),
        (.double(-.infinity), "null"),
        (.string(""), #""""#),
        (.string("AA:BB:CC:DD:EE:FF"), #""AA:BB:CC:DD:EE:FF""#),
        (.string("quote \" backslash \\ slash /"), #""quote \" backslash \\ slash /""#),
        (.string("tab\tnl\ncr\r"), #""tab\tnl\ncr\r""#),
        (.string("\u{0}\u{1}\u{8}\u{C}\u{1B}[31m\u{1F}"), #""\u0000\u0001\u0008\u000c\u001b[31m\u001f""#),
        (.string("del\u{7F}"), #""del\u007f""#),
        (.string("C1 \u{80}\u{85}\u{9B}2J\u{9F}"), #""C1 \u0080\u0085\u009b2J\u009f""#),
        (.string("not C1: \u{A0}\u{C2}\u{BF} é ünïcødé 🎧"), "\"not C1: \u{A0}\u{C2}\u{BF} é ünïcødé 🎧\""),
        (.array([]), "[]"),
        (.object([]), "{}"),
        (.array([.int(1), .null, .string("a")]), #"[1,null,"a"]"#),
        (.object([("b", .int(1)), ("a", .object([("x\n", .bool(false))]))]), #"{"b":1,"a":{"x\n":false}}"#),
    ])
    func exact(_ value: JSONValue, _ text: String) {
        #expect(value.serialized() == text)
        #expect(value.serializedUTF8() == Array(text.utf8))
    }

    @Test("random strings read back as themselves, no raw control character")
    func roundTrip() throws {
        // Scalars weighted towards the ones that need care: C0, DEL, C1, quote, backslash,
        // U+00C2 (whose UTF-8 lead byte is the C1 lead byte), multi-byte and astral.
        let pool: [Unicode.Scalar] = (0...0x20).map { Unicode.Scalar($0)! } + (0x7E...0xC3).map { Unicode.Scalar($0)! }
            + ["\"", "\\", "/", "a", "Z", "é", "\u{2028}", "\u{FFFD}", "😀", "\u{10FFFF}"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var s = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...24, using: &generator) { s.append(pool.randomElement(using: &generator)!) }
            let string = String(s)
            let line = JSONValue.object([("k", .string(string))]).serializedUTF8()
            #expect(!line.contains { $0 < 0x20 || $0 == 0x7F }, "\(string.debugDescription)")
            #expect(!zip(line, line.dropFirst()).contains { $0 == 0xC2 && (0x80...0x9F).contains($1) }, "\(string.debugDescription)")
            let parsed = try JSONSerialization.jsonObject(with: Data(line)) as? [String: String]
            #expect(parsed == ["k": string], "\(string.debugDescription)")
        }
    }
}

/// The hex spellings of manufacturer and service data against `String(_:radix:)`, for every
/// byte and a spread of 16-bit company identifiers.
@Suite("Hex spelling")
struct HexSpellingTests {
    @Test func everyByteIsTwoLowercaseDigits() {
        let all = (0...255).map(UInt8.init)
        let expected = all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(all.hexString == expected)
        #expect([UInt8]().hexString == "")
        #expect([0x01, 0x02, 0xab].hexString == "0102ab")
    }

    @Test func companyIdentifiersAreFourLowercaseDigits() {
        for value in [0, 1, 0x000f, 0x00f0, 0x0f00, 0xf000, 0x05f1, 0x004c, 0xabcd, 0xffff] as [UInt16] {
            let text = String(value, radix: 16)
            #expect(Records.hex4(value) == String(repeating: "0", count: 4 - text.count) + text)
        }
    }
}
