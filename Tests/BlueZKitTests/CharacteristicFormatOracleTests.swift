import Foundation
import SimulatorHarness
import Testing
@testable import BlueZKit

/// Conformance: values of every characteristic of the table, random (seeded) and cut short,
/// decoded by BlueZKit and by bluetooth-sig's own parsers (the wheel the table is generated
/// from, through Oracles/decode-gatt.py in the venv `make oracles` fills). Where bluetooth-sig
/// gives a single number or string, it is compared with the field's; where it reports a
/// special value, BlueZKit's field has that status; a value cut short neither decodes.
/// Where bluetooth-sig departs from the specifications, the test says how (``departures``).
@Suite("Characteristic formats against bluetooth-sig")
struct CharacteristicFormatOracleTests {
    /// bluetooth-sig's value as a multiple of the GSS's where its parser scales otherwise:
    /// Rainfall in millimetres (the GSS: metre, M = 1, d = -3), Luminous Exposure unscaled
    /// (the GSS: lux hour, d = 3), Length unscaled (the GSS: metre, d = -7).
    static let departures: [UInt16: Double] = [0x2A78: 1000, 0x2AFE: 0.001, 0x2C0A: 10_000_000]

    /// bluetooth-sig's reading of an IEEE 11073-20601 SFLOAT: its exponent as offset binary
    /// (nibble - 8), where the standard has two's complement; the mantissa and the reserved
    /// values as the standard has them. Compared against this, so that the mantissa is checked.
    static func biasedSFLOAT(_ value: [UInt8]) -> Double {
        let raw = Int(value[0]) | Int(value[1]) << 8
        let mantissa = raw & 0x800 != 0 ? (raw & 0xFFF) - 0x1000 : raw & 0xFFF
        let exponent = (raw >> 12) - 8
        return Double(mantissa) * (exponent < 0 ? 1 / pow(10, Double(-exponent)) : pow(10, Double(exponent)))
    }

    /// A random value of the format when its fields are all of a fixed size and always
    /// present (text: 1 to 12 ASCII letters), else nil.
    static func randomValue(_ format: CharacteristicFormat, _ g: inout SplitMix64) -> [UInt8]? {
        var bytes: [UInt8] = []
        for field in format.fields {
            guard field.presence == nil else { return nil }
            switch field.type {
            case .utf8: bytes += (0..<(1 + Int(g.next() % 12))).map { _ in UInt8(ascii: "a") + UInt8(g.next() % 26) }
            case .repeated: return nil
            default:
                let size = field.type.size ?? 0
                var raw = (0..<size).map { _ in UInt8(truncatingIfNeeded: g.next()) }
                // One value in eight is a special value of the field, when it has some.
                if let special = field.special.keys.sorted().first, g.next() % 8 == 0 {
                    raw = (0..<size).map { UInt8(truncatingIfNeeded: special >> UInt64(8 * $0)) }
                }
                bytes += raw
            }
        }
        return bytes
    }

    @Test func singleValuesDecodeAsBluetoothSigDecodesThem() async throws {
        var g = SplitMix64(seed: 0x6A77_F0E5)
        var cases: [(CharacteristicFormat, [UInt8])] = []
        for format in CharacteristicFormat.table where format.fields.count == 1 {
            for _ in 0..<8 {
                if let value = Self.randomValue(format, &g) { cases.append((format, value)) }
            }
        }
        let answers = try await AdvertisedFormatOracleTests.oracle(cases.map { String(format: "%04x ", $0.0.uuid16!) + hex($0.1) },
                                                               script: "decode-gatt.py")
        var compared = Set<UInt16>()
        for ((format, value), answer) in zip(cases, answers) {
            let label = "\(format.name) \(hex(value)): \(answer)"
            guard case .decoded(_, let fields) = format.decode(value), let field = fields.first else {
                Issue.record("undecodable: \(label)")
                continue
            }
            if let special = answer["special"] as? String {
                #expect(field.value == nil && field.status == special, "\(label)")
                compared.insert(format.uuid16!)
                continue
            }
            guard let theirs = answer["value"] else { continue }  // a structure, or bluetooth-sig refuses a value
            // An enumeration bluetooth-sig names (Time Zone "UTC+05:30"): not a number to compare.
            if theirs is String, case .integer? = field.value { continue }
            compared.insert(format.uuid16!)
            switch field.value {
            case .integer(let i)?:
                // Boolean (0x2AE2): bluetooth-sig gives true for any value but 0 (the GSS defines 0 and 1).
                let expected = format.uuid16 == 0x2AE2 ? (i != 0 ? 1.0 : 0.0) : Double(i)
                #expect((theirs as? NSNumber)?.doubleValue == expected, "\(label)")
            case .number(let d)?:
                let b = (theirs as? NSNumber)?.doubleValue ?? .nan
                let ours = format.fields[0].type == .medfloat16 ? Self.biasedSFLOAT(value) : d * (Self.departures[format.uuid16!] ?? 1)
                #expect(abs(ours - b) <= 1e-9 * max(1, abs(b)), "\(label)")
            case .text(let t)?: #expect(theirs as? String == t, "\(label)")
            default: Issue.record("no value: \(label)")
            }
        }
        // Most single-field characteristics come back as a number or a string from both.
        #expect(compared.count >= 80, "\(compared.count) characteristics compared")
    }

    @Test func valuesCutShortDecodeNeither() async throws {
        let formats = CharacteristicFormat.table.filter { format in
            format.fields.count == 1 && (format.fields[0].type.size ?? 0) > 1
        }
        let cut = formats.map { format in (format, [UInt8](repeating: 0x01, count: format.fields[0].type.size! - 1)) }
        let answers = try await AdvertisedFormatOracleTests.oracle(cut.map { String(format: "%04x ", $0.0.uuid16!) + hex($0.1) },
                                                               script: "decode-gatt.py")
        for ((format, value), answer) in zip(cut, answers) {
            #expect(format.decode(value) == .undecodable(name: format.name, reason: "truncated"))
            #expect(answer["value"] == nil && answer["special"] == nil, "\(format.name) \(hex(value)): bluetooth-sig decodes \(answer)")
        }
        #expect(cut.count >= 50)
    }
}
