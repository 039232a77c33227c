import SimulatorHarness
import Testing
@testable import BlueZKit

/// Bytes from lowercase hex (test vectors).
func bytes(_ hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var i = hex.startIndex
    while i < hex.endIndex {
        let next = hex.index(i, offsetBy: 2)
        out.append(UInt8(hex[i..<next], radix: 16)!)
        i = next
    }
    return out
}

@Suite("Advertised formats: iBeacon, Eddystone, BTHome v2", .cpuBound)
struct AdvertisedFormatsTests {
    // MARK: iBeacon (Apple, Proximity Beacon Specification R1)

    @Test func iBeaconFieldsAreBigEndianAndPowerSigned() throws {
        let beacon = try #require(IBeacon.decode(manufacturerData: bytes("0215e2c56db5dffb48d2b060d0f5a71096e00102fffec5"))?.frame)
        #expect(beacon.proximityUUID.description == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(beacon.major == 0x0102)
        #expect(beacon.minor == 0xfffe)
        #expect(beacon.measuredPower == -59)
    }

    @Test func otherAppleFramesAreNotIBeacons() {
        #expect(IBeacon.decode(manufacturerData: bytes("1005031c0a9e45")) == nil)
        #expect(IBeacon.decode(manufacturerData: []) == nil)
    }

    @Test func aShortIBeaconIsUndecodable() {
        #expect(IBeacon.decode(manufacturerData: bytes("0215e2c56db5dffb48d2b060d0f5a71096e00102fffe")) == .undecodable("22 bytes, 23 needed"))
    }

    // MARK: Eddystone (google/eddystone protocol specification)

    @Test func eddystoneUID() {
        let frame = Eddystone.decode(serviceData: bytes("00ec00112233445566778899aabbccddeeff0000"))
        #expect(frame == .decoded(.uid(.init(rangingData: -20, namespace: bytes("00112233445566778899"), instance: bytes("aabbccddeeff")))))
        // The two reserved bytes may be left out.
        #expect(Eddystone.decode(serviceData: bytes("00ec00112233445566778899aabbccddeeff")).frame == frame.frame)
    }

    @Test func eddystoneURLExpandsSchemeAndCodes() {
        #expect(Eddystone.decode(serviceData: bytes("10eb03676f6f676c6507")) == .decoded(.url(.init(txPower: -21, url: "https://google.com"))))
        #expect(Eddystone.decode(serviceData: bytes("10f8006578616d706c6500612f62")) == .decoded(.url(.init(txPower: -8, url: "http://www.example.com/a/b"))))
    }

    @Test func eddystoneTLM() {
        let frame = Eddystone.decode(serviceData: bytes("20000bb8158000000064000004d2"))
        #expect(frame == .decoded(.tlm(.init(version: 0, batteryVoltage: 3000, temperature: 21.5, advertisingCount: 100, secondsCount: 1234))))
        // TEMP 0x8000: not supported; negative temperatures are two's complement 8.8.
        if case .tlm(let tlm) = Eddystone.decode(serviceData: bytes("2000000080000000000000000000")).frame { #expect(tlm.temperature == nil) } else { Issue.record("no TLM") }
        if case .tlm(let tlm) = Eddystone.decode(serviceData: bytes("20000000ff800000000000000000")).frame { #expect(tlm.temperature == -0.5) } else { Issue.record("no TLM") }
    }

    @Test("Eddystone frames that cannot be decoded say why", arguments: [
        ("", "empty service data"),
        ("00ec0011", "UID frame of 4 bytes, 18 or 20 expected"),
        ("10eb", "URL frame of 2 bytes, 3 at least"),
        ("10eb04676f", "URL scheme prefix 0x04 is reserved"),
        ("10eb0367ff", "URL byte 0xff is reserved"),
        ("2001" + String(repeating: "00", count: 16), "encrypted TLM (eTLM)"),
        ("20000bb8", "TLM frame of 4 bytes, 14 expected"),
        ("30ec0102030405060708", "EID frame (ephemeral identifier, resolved only by its registrar)"),
        ("40", "frame type 0x40 is not in the Eddystone specification"),
    ])
    func eddystoneUndecodable(hex: String, reason: String) {
        #expect(Eddystone.decode(serviceData: bytes(hex)) == .undecodable(reason))
    }

    // MARK: BTHome v2 (bthome.io/format)

    @Test func bthomeTemperatureAndHumidity() throws {
        // The format's own example: 25.00 °C, 50.55 %.
        let packet = try #require(BTHome.decode(serviceData: bytes("4002c40903bf13")).frame)
        #expect(packet.version == 2)
        #expect(!packet.triggerBased)
        #expect(packet.objects == [
            BTHome.Object(id: 0x02, name: "temperature", unit: "°C", value: .number(25.0)),
            BTHome.Object(id: 0x03, name: "humidity", unit: "%", value: .number(50.55)),
        ])
    }

    @Test func bthomeValuesOfEveryKind() throws {
        // packet id 9, battery 100 %, temperature -1.5 (signed, factor 0.01), opening true,
        // button long_press, dimmer rotate_left 3 steps, timestamp, text "hé", raw, firmware 4.2.1.0.
        let hex = "44" + "0009" + "0164" + "026aff" + "1101" + "3a04" + "3c0103" + "5000e1f505" + "5303" + "68c3a9" + "5402beef" + "f1000102 04".replacingOccurrences(of: " ", with: "")
        let packet = try #require(BTHome.decode(serviceData: bytes(hex)).frame)
        #expect(packet.triggerBased)
        #expect(packet.objects.map(\.value) == [
            .integer(9), .integer(100), .number(-1.5), .bool(true), .event("long_press"), .event("rotate_left", steps: 3),
            .timestamp(100_000_000), .text("hé"), .bytes([0xbe, 0xef]), .version("4.2.1.0"),
        ])
        #expect(packet.objects.map(\.name) == ["packet_id", "battery", "temperature", "opening", "button", "dimmer",
                                               "timestamp", "text", "raw", "firmware_version"])
        #expect(packet.objects[1].unit == "%")
    }

    @Test func bthomeFactorsGiveTheExactDecimal() throws {
        // 0x58: temperature, signed 1 byte, factor 0.35: 10 × 0.35 = 3.5; 0x0A energy 0.001 kWh.
        let packet = try #require(BTHome.decode(serviceData: bytes("400a1027005814")).frame)
        #expect(packet.objects.map(\.value) == [.number(10.0), .number(7.0)])
        let more = try #require(BTHome.decode(serviceData: bytes("40020100")).frame)
        #expect(more.objects.map(\.value) == [.number(0.01)])
    }

    @Test func everyObjectIdOfTheTableIsKnown() {
        #expect(BTHome.objectTypes.count == 95)
        #expect(BTHome.types[0x02]?.name == "temperature")
        #expect(BTHome.types[0xF0]?.name == "device_type_id")
        #expect(BTHome.types[0xFF] == nil)
    }

    @Test("BTHome frames that cannot be decoded say why", arguments: [
        ("", "empty service data"),
        ("41c409", "encrypted (no bind key)"),
        ("2002c409", "BTHome version 1"),
        ("40ff01", "object id 0xff at byte 1 is not in the BTHome v2 format"),
        ("4002c4", "object 0x02 (temperature) at byte 1: 2 bytes needed, 1 left"),
        ("4002c40903", "object 0x03 (humidity) at byte 4: 2 bytes needed, 0 left"),
        ("40530568", "object 0x53 (text) at byte 1: 5 bytes announced, 1 left"),
        ("405302c328", "object 0x53 (text) at byte 1: text is not UTF-8"),
        ("403a07", "object 0x3a (button) at byte 1: event id 0x07 is not in the BTHome v2 format"),
    ])
    func bthomeUndecodable(hex: String, reason: String) {
        #expect(BTHome.decode(serviceData: bytes(hex)) == .undecodable(reason))
    }

    // MARK: Truncated and garbled frames

    @Test func everyPrefixOfAFrameDecodesOrSaysWhyNever() {
        let frames: [(String, ([UInt8]) -> Bool)] = [
            ("0215e2c56db5dffb48d2b060d0f5a71096e00102fffec5", { IBeacon.decode(manufacturerData: $0)?.frame != nil }),
            ("00ec00112233445566778899aabbccddeeff0000", { Eddystone.decode(serviceData: $0).frame != nil }),
            ("20000bb8158000000064000004d2", { Eddystone.decode(serviceData: $0).frame != nil }),
            ("4400090164530368c3a9", { BTHome.decode(serviceData: $0).frame != nil }),
        ]
        for (hex, decodes) in frames {
            let frame = bytes(hex)
            // Only the whole frame (and, for BTHome, prefixes ending between objects) decode.
            #expect(decodes(frame))
            for length in 0..<frame.count { _ = decodes(Array(frame.prefix(length))) }
        }
        #expect(BTHome.decode(serviceData: bytes("44000901645303")).frame == nil)
        #expect(BTHome.decode(serviceData: bytes("440009016453")).frame == nil)
    }

    @Test func randomBytesNeverCrashAndAreDecodedOrUndecodable() {
        var generator = SplitMix64(seed: 30)
        var decoded = 0, undecodable = 0
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 32)
            var data = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if !data.isEmpty, generator.next() % 2 == 0 { data[0] = 0x40 }  // BTHome v2, unencrypted, often
            let formats = AdvertisedFormats(manufacturerData: [0x004C: [0x02, 0x15] + data],
                                            serviceData: [Eddystone.serviceUUID: data, BTHome.serviceUUID: data])
            for format in [formats.bthome.map { $0.frame != nil }, formats.eddystone.map { $0.frame != nil }] {
                if format == true { decoded += 1 } else { undecodable += 1 }
            }
            #expect(formats.iBeacon != nil)
        }
        #expect(decoded > 0 && undecodable > 0)
    }

    // MARK: Records

    @Test func formatsFoundInDeviceProperties() {
        var properties = DeviceProperties()
        #expect(properties.advertisedFormats.isEmpty)
        properties.manufacturerData = [0x004C: bytes("0215e2c56db5dffb48d2b060d0f5a71096e00102fffec5"), 0x05f1: [1]]
        properties.serviceData = [BTHome.serviceUUID: bytes("4002c409")]
        let formats = properties.advertisedFormats
        #expect(formats.contains(.iBeacon) && formats.contains(.bthome) && !formats.contains(.eddystone))
        #expect(formats.bthome?.frame?.objects.first?.value == .number(25.0))
    }
}
