/// The 16-byte AES-128 key a BTHome v2 device encrypts its advertisements with, its "bind
/// key" (bthome.io/encryption; Home Assistant asks for it as 32 hex characters).
///
/// The key is a secret: `description`, `debugDescription` and `dump` never show its bytes.
public struct BTHomeBindKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key's 16 bytes, in the order the device's firmware gives them.
    let bytes: [UInt8]

    /// The key of these bytes; nil unless there are exactly 16.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// The key written as 32 hex digits (either case, nothing else: no spaces, no `0x`),
    /// as bthome.io and Home Assistant write it (`231d39c1d7cc1ab1aee224cd096db932`).
    /// - Returns: nil for any other text.
    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for i in stride(from: 0, to: 32, by: 2) {
            guard let high = Self.nibble(digits[i]), let low = Self.nibble(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `BTHomeBindKey(redacted)`: never the key.
    public var description: String { "BTHomeBindKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
