@testable import BlueZKit
import SimulatorHarness
import Testing

/// The decoder against values with known answers, worked out by hand from the GATT
/// Specification Supplement's structures.
@Suite(.cpuBound) struct CharacteristicFormatTests {
    typealias Field = DecodedCharacteristicValue.Field

    static let temperature = BluetoothUUID(uuid16: 0x2A6E)
    static let humidity = BluetoothUUID(uuid16: 0x2A6F)
    static let pressure = BluetoothUUID(uuid16: 0x2A6D)
    static let heartRate = BluetoothUUID(uuid16: 0x2A37)
    static let bpm = "beats per minute"

    static func fields(_ uuid: BluetoothUUID, _ value: [UInt8]) -> [Field]? {
        guard case .decoded(_, let fields)? = CharacteristicFormat.decode(uuid: uuid, value: value) else { return nil }
        return fields
    }

    @Test func batteryLevel() {
        #expect(CharacteristicFormat.decode(uuid: .batteryLevel, value: [0x64])
                == .decoded(name: "Battery Level", fields: [Field(name: "Battery Level", value: .integer(100), unit: "percentage")]))
    }

    @Test("Temperature: sint16, 0.01 degree Celsius, 0x8000 not known", arguments: [
        ([0x0A, 0x08], 20.58), ([0x18, 0xFC], -10.0), ([0xFF, 0x7F], 327.67), ([0x00, 0x00], 0.0), ([0x01, 0x80], -327.67),
    ] as [([UInt8], Double)])
    func temperature(_ bytes: [UInt8], _ celsius: Double) {
        #expect(Self.fields(Self.temperature, bytes) == [Field(name: "Temperature", value: .number(celsius), unit: "degree Celsius")])
    }

    @Test func specialValues() {
        #expect(Self.fields(Self.temperature, [0x00, 0x80])
                == [Field(name: "Temperature", value: nil, unit: "degree Celsius", status: "value is not known")])
        #expect(Self.fields(Self.humidity, [0xFF, 0xFF])
                == [Field(name: "Humidity", value: nil, unit: "percentage", status: "value is not known")])
    }

    @Test func humidityAndPressure() {
        #expect(Self.fields(Self.humidity, [0x94, 0x11]) == [Field(name: "Humidity", value: .number(45.0), unit: "percentage")])
        #expect(Self.fields(Self.humidity, [0xBF, 0x13]) == [Field(name: "Humidity", value: .number(50.55), unit: "percentage")])
        #expect(Self.fields(Self.pressure, [0x02, 0x76, 0x0F, 0x00]) == [Field(name: "Pressure", value: .number(101_325.0), unit: "pascal")])
    }

    @Test func heartRateMeasurement() {
        let hr8 = "Heart Rate Measurement Value (8 bit resolution)", hr16 = "Heart Rate Measurement Value (16 bit resolution)"
        #expect(Self.fields(Self.heartRate, [0x00, 72])
                == [Field(name: "Flags", value: .integer(0)), Field(name: hr8, value: .integer(72), unit: Self.bpm)])
        #expect(Self.fields(Self.heartRate, [0x01, 0x2C, 0x01])
                == [Field(name: "Flags", value: .integer(1)), Field(name: hr16, value: .integer(300), unit: Self.bpm)])
        // Energy expended (bit 3) and two RR-intervals (bit 4), in 1/1024 s.
        #expect(Self.fields(Self.heartRate, [0x18, 72, 0x10, 0x00, 0x00, 0x04, 0xD4, 0x03])
                == [Field(name: "Flags", value: .integer(0x18)), Field(name: hr8, value: .integer(72), unit: Self.bpm),
                    Field(name: "Energy Expended", value: .integer(16), unit: "joule"),
                    Field(name: "RR-interval", value: .list([.integer(1024), .integer(980)]))])
        // RR-intervals flagged but none sent: an empty list.
        #expect(Self.fields(Self.heartRate, [0x10, 60])
                == [Field(name: "Flags", value: .integer(0x10)), Field(name: hr8, value: .integer(60), unit: Self.bpm),
                    Field(name: "RR-interval", value: .list([]))])
    }

    @Test("Undecodable: truncated or bytes left over, never a guess", arguments: [
        (BluetoothUUID.batteryLevel, [], "truncated"),
        (.batteryLevel, [0x64, 0x00], "trailing bytes"),
        (BluetoothUUID(uuid16: 0x2A6E), [0x0A], "truncated"),
        (BluetoothUUID(uuid16: 0x2A6E), [0x0A, 0x08, 0x00], "trailing bytes"),
        (BluetoothUUID(uuid16: 0x2A37), [], "truncated"),
        (BluetoothUUID(uuid16: 0x2A37), [0x01, 0x2C], "truncated"),
        (BluetoothUUID(uuid16: 0x2A37), [0x08, 72, 0x10], "truncated"),
        (BluetoothUUID(uuid16: 0x2A37), [0x10, 72, 0x00], "trailing bytes"),
        (BluetoothUUID(uuid16: 0x2A37), [0x00, 72, 0x00], "trailing bytes"),
    ] as [(BluetoothUUID, [UInt8], String)])
    func undecodable(_ uuid: BluetoothUUID, _ bytes: [UInt8], _ reason: String) throws {
        let decoded = try #require(CharacteristicFormat.decode(uuid: uuid, value: bytes))
        #expect(decoded == .undecodable(name: decoded.name, reason: reason))
    }

    @Test func strings() {
        #expect(Self.fields(BluetoothUUID(uuid16: 0x2A29), Array("Blesim Labs".utf8))
                == [Field(name: "Manufacturer Name", value: .text("Blesim Labs"))])
        #expect(CharacteristicFormat.decode(uuid: BluetoothUUID(uuid16: 0x2A29), value: [0xFF, 0xFE])
                == .undecodable(name: "Manufacturer Name String", reason: "invalid UTF-8"))
    }

    @Test func noFormat() {
        #expect(CharacteristicFormat.format(for: BluetoothUUID("5a1e0101-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!) == nil)
        #expect(CharacteristicFormat.format(for: BluetoothUUID(uuid16: 0x180F)) == nil)  // a service
        #expect(CharacteristicFormat.format(for: BluetoothUUID(uuid16: 0x2A2B)) == nil)  // Current Time: nested structures
        #expect(CharacteristicFormat.format(for: .batteryLevel)?.name == "Battery Level")
    }

    @Test func tableIsSortedAndWhole() {
        let keys = CharacteristicFormat.table.compactMap(\.uuid16)
        #expect(keys.count == CharacteristicFormat.table.count)
        #expect(keys == keys.sorted() && Set(keys).count == keys.count)
        #expect(keys.count == 214)
        for format in CharacteristicFormat.table {
            #expect(CharacteristicFormat.format(for: BluetoothUUID(uuid16: format.uuid16!)) == format)
        }
    }

    @Test("medfloat16 (SFLOAT) and medfloat32 (FLOAT), IEEE 11073-20601", arguments: [
        (CharacteristicFormat.FieldType.medfloat16, [0x72, 0x00], 114.0, nil),       // exponent 0
        (.medfloat16, [0x6E, 0xF1], 36.6, nil),                                     // 366 × 10^-1
        (.medfloat16, [0xFF, 0x0F], -1.0, nil),                                     // mantissa -1
        (.medfloat16, [0xFF, 0x07], nil, "NaN"),
        (.medfloat16, [0x00, 0x08], nil, "NRes"),
        (.medfloat16, [0xFE, 0x07], nil, "+INFINITY"),
        (.medfloat16, [0x02, 0x08], nil, "-INFINITY"),
        (.medfloat16, [0x01, 0x08], nil, "reserved"),
        (.medfloat32, [0x6E, 0x01, 0x00, 0xFF], 36.6, nil),
        (.medfloat32, [0xFF, 0xFF, 0x7F, 0x00], nil, "NaN"),
        (.medfloat32, [0xFE, 0xFF, 0xFF, 0x02], -200.0, nil),                       // -2 × 10^2
    ] as [(CharacteristicFormat.FieldType, [UInt8], Double?, String?)])
    func medfloat(_ type: CharacteristicFormat.FieldType, _ bytes: [UInt8], _ value: Double?, _ status: String?) {
        let format = CharacteristicFormat(uuid16: nil, name: "Test", fields: [.init("Test", type, unit: "degree Celsius")])
        #expect(format.decode(bytes) == .decoded(name: "Test", fields: [
            Field(name: "Test", value: value.map { .number($0) }, unit: "degree Celsius", status: status),
        ]))
    }

    @Test("Presentation Format descriptor: format, exponent, unit (Core Specification Vol 3 Part G 3.3.3.5)")
    func presentationFormat() throws {
        // sint16, exponent -2, degree Celsius (0x272F), namespace 1, description 0.
        let celsius = try #require(CharacteristicFormat(presentationFormat: [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00, 0x00], name: "t"))
        #expect(celsius.decode([0x66, 0x08]) == .decoded(name: "t", fields: [Field(name: "t", value: .number(21.5), unit: "degree Celsius")]))
        #expect(celsius.decode([0x66]) == .undecodable(name: "t", reason: "truncated"))
        // uint8, exponent 0, percentage (0x27AD): an integer.
        let percent = try #require(CharacteristicFormat(presentationFormat: [0x04, 0x00, 0xAD, 0x27, 0x01, 0x00, 0x00], name: "p"))
        #expect(percent.decode([0x37]) == .decoded(name: "p", fields: [Field(name: "p", value: .integer(55), unit: "percentage")]))
        // uint16, exponent 1, unitless (0x2700): 12 × 10.
        let tens = try #require(CharacteristicFormat(presentationFormat: [0x06, 0x01, 0x00, 0x27, 0x01, 0x00, 0x00], name: "n"))
        #expect(tens.decode([0x0C, 0x00]) == .decoded(name: "n", fields: [Field(name: "n", value: .number(120.0))]))
        // utf8s; float32 ignores the exponent (it applies to integers only).
        let text = try #require(CharacteristicFormat(presentationFormat: [0x19, 0x00, 0x00, 0x27, 0x01, 0x00, 0x00], name: "s"))
        #expect(text.decode(Array("ok".utf8)) == .decoded(name: "s", fields: [Field(name: "s", value: .text("ok"))]))
        let float = try #require(CharacteristicFormat(presentationFormat: [0x14, 0x02, 0x00, 0x27, 0x01, 0x00, 0x00], name: "f"))
        #expect(float.decode([0x00, 0x00, 0xC0, 0x3F]) == .decoded(name: "f", fields: [Field(name: "f", value: .number(1.5))]))
        // Formats it cannot read, and values that are not 7 bytes.
        for code: UInt8 in [0x01, 0x02, 0x05, 0x0A, 0x0B, 0x12, 0x18, 0x1A, 0x1B, 0x1C, 0x00, 0xFF] {
            #expect(CharacteristicFormat(presentationFormat: [code, 0, 0, 0x27, 1, 0, 0], name: "x") == nil, "format \(code)")
        }
        #expect(CharacteristicFormat(presentationFormat: [0x04, 0, 0xAD, 0x27, 1, 0], name: "x") == nil)
        #expect(CharacteristicFormat(presentationFormat: [0x04, 0, 0xAD, 0x27, 1, 0, 0, 0], name: "x") == nil)
    }

    @Test func signedWidths() {
        let format = CharacteristicFormat(uuid16: nil, name: "S", fields: [
            .init("a", .signed(bytes: 1)), .init("b", .signed(bytes: 3)), .init("c", .unsigned(bytes: 6)),
            .init("d", .signed(bytes: 4), scale: .init(multiplier: 5, decimalExponent: 1, binaryExponent: -1)),
        ])
        #expect(format.decode([0x80, 0xFF, 0xFF, 0xFF, 0x01, 0, 0, 0, 0, 0x80, 0xFE, 0xFF, 0xFF, 0xFF]) == .decoded(name: "S", fields: [
            Field(name: "a", value: .integer(-128)), Field(name: "b", value: .integer(-1)),
            Field(name: "c", value: .integer(0x8000_0000_0001)), Field(name: "d", value: .number(-50.0)),
        ]))
    }
}
