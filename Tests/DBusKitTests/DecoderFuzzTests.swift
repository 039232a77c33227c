import Testing
@testable import DBusKit
import SimulatorHarness

/// A bounded mutation fuzz of the message decoder: real BlueZ-shaped messages marshalled to
/// wire format, bytes flipped at random, demarshalled by libdbus (which rejects what is not
/// valid D-Bus) and decoded. Nothing may crash; untouched messages decode to what was sent.
@Suite(.cpuBound) struct DecoderFuzzTests {
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

    /// A fixed amount of work from a fixed seed (it used to be "as many as fit in 2 s, at
    /// least 1,000", which a sanitizer build on a loaded machine does not always manage),
    /// on a thread of its own (a 2 s busy loop on one of the two cooperative threads held
    /// up every other test of the process).
    @Test func mutatedMessagesNeverCrashTheDecoder() async throws {
        let (accepted, inconsistent) = try await offThread { () throws -> (Int, [String]) in
            var generator = SplitMix64(seed: 0x5A1E_B1EC)
            var accepted = 0
            var inconsistent: [String] = []
            for _ in 0..<Self.mutations {
                var bytes = try MessageRoundTrip.marshal(Self.seeds.randomElement(using: &generator)!)
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let index = Int.random(in: 16..<bytes.count, using: &generator)   // keep the fixed header's length fields sane
                    bytes[index] = UInt8.random(in: 0...255, using: &generator)
                }
                if let message = MessageRoundTrip.demarshalAndDecode(bytes) {
                    accepted += 1
                    // A body for a signature that has values (expectations are recorded
                    // back on the test's task, below).
                    if !(message.signature.isEmpty || !message.body.isEmpty || message.signature.allSatisfy({ "()".contains($0) })) {
                        inconsistent.append("signature \(message.signature), body \(message.body)")
                    }
                }
            }
            return (accepted, inconsistent)
        }
        #expect(inconsistent.isEmpty, "\(inconsistent.prefix(3))")
        // Some mutations pass libdbus's validation (a changed string byte, a value): the
        // decoder itself was exercised, not only libdbus's rejection.
        #expect(accepted > 0)
        print("decoder fuzz: \(Self.mutations) mutated messages, \(accepted) accepted by libdbus and decoded")
    }

    static let mutations = 3_000
}
