import Testing
@testable import DBusKit

/// A bounded mutation fuzz of the message decoder: real BlueZ-shaped messages marshalled to
/// wire format, bytes flipped at random, demarshalled by libdbus (which rejects what is not
/// valid D-Bus) and decoded. Nothing may crash; untouched messages decode to what was sent.
@Suite struct DecoderFuzzTests {
    static let seeds: [[DBusValue]] = [
        [.objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"),
         .dictionary(keySignature: "s", valueSignature: "a{sv}", [
            .init(.string("org.bluez.Device1"), .stringVariantDictionary([
                "Address": .string("C0:FF:EE:00:00:01"), "RSSI": .int16(-55), "Name": .string("blesim Probe"),
                "UUIDs": .stringArray(["0000180f-0000-1000-8000-00805f9b34fb"]),
                "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(0x05F1), .variant(.bytes([1, 2])))]),
            ])),
         ])],
        [.string("org.bluez.GattCharacteristic1"), .stringVariantDictionary(["Value": .bytes([0x81, 1, 4, 2])]), .stringArray(["Notifying"])],
        [.objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"), .stringArray(["org.bluez.Device1", "org.bluez.Battery1"])],
    ]

    @Test func untouchedMessagesDecodeToWhatWasSent() throws {
        for seed in Self.seeds {
            let decoded = try #require(MessageRoundTrip.demarshalAndDecode(try MessageRoundTrip.marshal(seed)))
            #expect(decoded.body == seed)
            #expect(decoded.kind == .signal)
            #expect(decoded.member == "Values")
        }
    }

    @Test func mutatedMessagesNeverCrashTheDecoder() throws {
        var generator = SystemRandomNumberGenerator()
        let deadline = ContinuousClock.now + .seconds(2)
        var tried = 0, accepted = 0
        while ContinuousClock.now < deadline {
            var bytes = try MessageRoundTrip.marshal(Self.seeds.randomElement(using: &generator)!)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 16..<bytes.count, using: &generator)   // keep the fixed header's length fields sane
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if let message = MessageRoundTrip.demarshalAndDecode(bytes) {
                accepted += 1
                #expect(message.signature.isEmpty || !message.body.isEmpty || message.signature.allSatisfy { "()".contains($0) })
            }
            tried += 1
        }
        #expect(tried > 1_000)
        print("decoder fuzz: \(tried) mutated messages, \(accepted) accepted by libdbus and decoded")
    }
}
