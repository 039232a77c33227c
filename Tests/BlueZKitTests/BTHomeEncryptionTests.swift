import SimulatorHarness
import Testing
@testable import BlueZKit

/// Encrypted BTHome v2 frames (bthome.io/encryption) decrypted with OpenSSL's libcrypto.
@Suite("BTHome encryption", .cpuBound)
struct BTHomeEncryptionTests {
    /// bthome.io/encryption's example: key, MAC 54:48:E6:8F:80:A5, device information 0x41,
    /// counter bytes 00112233, objects 02ca09 03bf13 (25.06 °C, 50.55 %), whose ciphertext
    /// a47266c95f73 and MIC 78237214 the page gives.
    static let specKey = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db932")!
    static let specAddress = BluetoothAddress("54:48:E6:8F:80:A5")!
    static let specFrame = bytes("41" + "a47266c95f73" + "00112233" + "78237214")

    @Test func theSpecificationsExampleDecrypts() throws {
        let packet = try #require(BTHome.decode(serviceData: Self.specFrame, address: Self.specAddress, bindKey: Self.specKey).frame)
        #expect(packet.encrypted)
        #expect(packet.counter == 0x3322_1100)
        #expect(packet.version == 2)
        #expect(!packet.triggerBased)
        #expect(packet.objects == [
            BTHome.Object(id: 0x02, name: "temperature", unit: "°C", value: .number(25.06)),
            BTHome.Object(id: 0x03, name: "humidity", unit: "%", value: .number(50.55)),
        ])
    }

    @Test func aTriggerBasedFrameWithTheLargestCounter() throws {
        // Made with Python's cryptography AESCCM: packet id 9, button press; counter ffffffff.
        let key = try #require(BTHomeBindKey(hex: "00112233445566778899AABBCCDDEEFF"))
        let frame = bytes("45" + "ce3202b5" + "ffffffff" + "64921b1b")
        let packet = try #require(BTHome.decode(serviceData: frame, address: BluetoothAddress("C0:FF:EE:00:00:01")!, bindKey: key).frame)
        #expect(packet.triggerBased)
        #expect(packet.counter == UInt32.max)
        #expect(packet.objects.map(\.value) == [.integer(9), .event("press")])
    }

    @Test func anUnencryptedFrameNeedsNoKeyAndReportsNoCounter() throws {
        let packet = try #require(BTHome.decode(serviceData: bytes("4002c40903bf13"), address: Self.specAddress, bindKey: Self.specKey).frame)
        #expect(!packet.encrypted)
        #expect(packet.counter == nil)
        #expect(packet.objects.count == 2)
    }

    @Test func withoutAKeyTheFrameIsUndecodable() {
        #expect(BTHome.decode(serviceData: Self.specFrame, address: Self.specAddress, bindKey: nil) == .undecodable("encrypted (no bind key)"))
        #expect(BTHome.decode(serviceData: Self.specFrame) == .undecodable("encrypted (no bind key)"))
    }

    @Test func aWrongKeyOrAnotherAddressFailsTheMIC() {
        let wrong = BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db933")!
        #expect(BTHome.decode(serviceData: Self.specFrame, address: Self.specAddress, bindKey: wrong) == .undecodable("MIC check failed: wrong bind key?"))
        #expect(BTHome.decode(serviceData: Self.specFrame, address: BluetoothAddress("54:48:E6:8F:80:A6")!, bindKey: Self.specKey)
            == .undecodable("MIC check failed: wrong bind key?"))
    }

    @Test("Every byte changed fails the MIC: ciphertext, counter, MIC and the device information")
    func tamperedFramesFailTheMIC() {
        for index in Self.specFrame.indices {
            var frame = Self.specFrame
            // Bit 0 of the device information kept: the frame stays encrypted.
            frame[index] ^= index == 0 ? 0x04 : 0x01
            #expect(BTHome.decode(serviceData: frame, address: Self.specAddress, bindKey: Self.specKey)
                == .undecodable("MIC check failed: wrong bind key?"), "byte \(index)")
        }
    }

    @Test("Every truncation is undecodable, never garbage")
    func truncatedFrames() {
        for length in 0..<Self.specFrame.count {
            let frame = Array(Self.specFrame.prefix(length))
            let expected: AdvertisedFormat<BTHome> = switch length {
            case 0: .undecodable("empty service data")
            case 1..<11: .undecodable("encrypted frame of \(length) bytes, 11 needed (objects, counter and MIC)")
            default: .undecodable("MIC check failed: wrong bind key?")
            }
            #expect(BTHome.decode(serviceData: frame, address: Self.specAddress, bindKey: Self.specKey) == expected, "\(length) bytes")
        }
    }

    @Test func plaintextThatIsNotBTHomeSaysWhyAfterDecryption() {
        // The objects decrypt, but object 0xff is not in the format: undecodable like a plain frame.
        let cipher = CCMCipher { _, _, ciphertext, _ in .plaintext([0xFF] + ciphertext.dropFirst()) }
        #expect(BTHome.decode(serviceData: Self.specFrame, address: Self.specAddress, bindKey: Self.specKey, cipher: cipher)
            == .undecodable("object id 0xff at byte 1 is not in the BTHome v2 format"))
    }

    @Test func withoutLibcryptoTheReasonSaysSo() {
        let cipher = CCMCipher { _, _, _, _ in .unavailable("libcrypto.so.3: cannot open shared object file") }
        #expect(BTHome.decode(serviceData: Self.specFrame, address: Self.specAddress, bindKey: Self.specKey, cipher: cipher)
            == .undecodable("encrypted, and libcrypto is not available to decrypt it: libcrypto.so.3: cannot open shared object file"))
        #expect(BTHome.decryptionUnavailable == nil, "libcrypto.so.3 is installed here")
    }

    @Test func theNonceIsAddressUUIDInformationAndCounter() {
        nonisolated(unsafe) var seen: [UInt8] = []
        let cipher = CCMCipher { _, nonce, _, _ in seen = nonce; return .tagMismatch }
        _ = BTHome.decode(serviceData: Self.specFrame, address: Self.specAddress, bindKey: Self.specKey, cipher: cipher)
        #expect(seen == bytes("5448e68f80a5" + "d2fc" + "41" + "00112233"))
    }

    @Test func bindKeysParseFromHexAndNeverShowTheirBytes() {
        #expect(BTHomeBindKey(hex: "231D39C1D7CC1AB1AEE224CD096DB932") == Self.specKey)
        #expect(BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db9") == nil)
        #expect(BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db9320") == nil)
        #expect(BTHomeBindKey(hex: "231d39c1d7cc1ab1aee224cd096db93g") == nil)
        #expect(BTHomeBindKey(hex: "0x1d39c1d7cc1ab1aee224cd096db932") == nil)
        #expect(BTHomeBindKey(bytes: [UInt8](repeating: 1, count: 15)) == nil)
        #expect(BTHomeBindKey(bytes: bytes("231d39c1d7cc1ab1aee224cd096db932")) == Self.specKey)
        var dumped = ""
        dump(Self.specKey, to: &dumped)
        for shown in ["\(Self.specKey)", String(reflecting: Self.specKey), dumped] {
            #expect(!shown.lowercased().contains("231d") && !shown.contains("35"), "\(shown)")
        }
    }

    @Test func advertisedFormatsUseTheKeyOfTheDevicesAddress() {
        let data = [BTHome.serviceUUID: Self.specFrame]
        let decrypted = AdvertisedFormats(manufacturerData: [:], serviceData: data, address: Self.specAddress, bthomeBindKey: Self.specKey)
        #expect(decrypted.bthome?.frame?.counter == 0x3322_1100)
        let keyless = AdvertisedFormats(manufacturerData: [:], serviceData: data, address: Self.specAddress)
        #expect(keyless.bthome == .undecodable("encrypted (no bind key)"))
    }
}
