internal import CCrypto

/// Encrypted BTHome v2 frames (bthome.io/encryption), decrypted as the PyPI package
/// bthome-ble does: the device information byte in the clear, then the objects encrypted with
/// AES-128-CCM (no associated data), then a 4-byte counter and a 4-byte MIC (CCM's tag). The
/// nonce is the device's address (6 bytes, as written), the UUID 0xFCD2 little-endian
/// (`d2 fc`), the device information byte and the counter as sent: 13 bytes.
extension BTHome {
    /// The fewest bytes of an encrypted frame: device information, 2 bytes of objects (the
    /// least bthome-ble decrypts), counter and MIC.
    static let encryptedMinimumLength = 1 + 2 + 4 + 4

    /// Decodes the service data of UUID 0xFCD2, decrypting an encrypted frame with `bindKey`.
    ///
    /// - Parameters:
    ///   - data: the service data, device information byte first.
    ///   - address: the device's address, part of the nonce of an encrypted frame.
    ///   - bindKey: the device's key; nil when none is known (an unencrypted frame needs none).
    /// - Returns: the frame (with ``encrypted`` and ``counter`` for an encrypted one), or
    ///   ``AdvertisedFormat/undecodable(_:)`` as ``decode(serviceData:)`` says, and for an
    ///   encrypted frame: `"encrypted (no bind key)"` without a key, `"MIC check failed: wrong
    ///   bind key?"` when the MIC does not match (a wrong key, or forged or damaged data:
    ///   nothing of it is decoded), a frame too short to hold objects, counter and MIC, or
    ///   libcrypto missing (``decryptionUnavailable``).
    public static func decode(serviceData data: [UInt8], address: BluetoothAddress, bindKey: BTHomeBindKey?) -> AdvertisedFormat<BTHome> {
        decode(serviceData: data, address: address, bindKey: bindKey, cipher: .libcrypto)
    }

    /// Why encrypted frames cannot be decrypted here, nil when they can: the reason OpenSSL's
    /// libcrypto.so.3 (Debian's libssl3) could not be loaded. Loads it on first use.
    public static var decryptionUnavailable: String? {
        ccrypto_load_error().map { String(cString: $0) }
    }

    /// ``decode(serviceData:address:bindKey:)`` with the AES-CCM implementation given.
    static func decode(serviceData data: [UInt8], address: BluetoothAddress, bindKey: BTHomeBindKey?,
                       cipher: CCMCipher) -> AdvertisedFormat<BTHome> {
        guard let info = data.first, info & 0x01 != 0 else { return decode(serviceData: data) }
        guard let bindKey else { return .undecodable("encrypted (no bind key)") }
        guard data.count >= encryptedMinimumLength else {
            return .undecodable("encrypted frame of \(data.count) bytes, \(encryptedMinimumLength) needed (objects, counter and MIC)")
        }
        let counterBytes = Array(data[data.count - 8..<data.count - 4])
        let mic = Array(data[data.count - 4..<data.count])
        let ciphertext = Array(data[1..<data.count - 8])
        let nonce = address.bytes + [0xD2, 0xFC, info] + counterBytes
        switch cipher.decrypt(bindKey.bytes, nonce, ciphertext, mic) {
        case .plaintext(let objects):
            // The objects decoded as an unencrypted frame's would be (bit 0 aside).
            return decodeObjects([info] + objects).map { frame in
                var frame = frame
                frame.encrypted = true
                frame.counter = counterBytes.reversed().reduce(0) { $0 << 8 | UInt32($1) }
                return frame
            }
        case .tagMismatch:
            return .undecodable("MIC check failed: wrong bind key?")
        case .unavailable(let why):
            return .undecodable("encrypted, and libcrypto is not available to decrypt it: \(why)")
        }
    }
}

/// AES-128-CCM decryption with a 13-byte nonce and a 4-byte tag (what BTHome v2 needs), as a
/// value so that tests can stand in for libcrypto.
struct CCMCipher: Sendable {
    enum Outcome: Sendable, Equatable {
        /// The tag matched.
        case plaintext([UInt8])
        /// The tag did not match: a wrong key, or forged or damaged data.
        case tagMismatch
        /// No implementation to decrypt with; why.
        case unavailable(String)
    }

    /// (key 16 bytes, nonce 13, ciphertext at least 1, tag 4) → outcome.
    let decrypt: @Sendable (_ key: [UInt8], _ nonce: [UInt8], _ ciphertext: [UInt8], _ tag: [UInt8]) -> Outcome

    /// OpenSSL's, through `CCrypto` (libcrypto.so.3 loaded at first use).
    static let libcrypto = CCMCipher { key, nonce, ciphertext, tag in
        precondition(key.count == 16 && nonce.count == 13 && tag.count == 4 && !ciphertext.isEmpty)
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let result = ccrypto_aes128_ccm_decrypt(key, nonce, ciphertext, ciphertext.count, tag, &plaintext)
        switch result {
        case CCRYPTO_DECRYPTED: return .plaintext(plaintext)
        case CCRYPTO_TAG_MISMATCH: return .tagMismatch
        default: return .unavailable(BTHome.decryptionUnavailable ?? "libcrypto could not set up AES-128-CCM")
        }
    }
}

extension BluetoothAddress {
    /// The six bytes as written, most significant first (`C0:FF:EE:00:00:01` → c0 ff ee 00 00 01).
    var bytes: [UInt8] {
        description.split(separator: ":").map { UInt8($0, radix: 16)! }
    }
}
