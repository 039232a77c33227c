/// A Bluetooth UUID identifying a GATT service, characteristic or descriptor.
///
/// Always stored in the canonical 128-bit form BlueZ uses on D-Bus: 36 lowercase
/// characters, `"0000180f-0000-1000-8000-00805f9b34fb"`. 16- and 32-bit UUIDs are
/// expanded onto the Bluetooth Base UUID `00000000-0000-1000-8000-00805F9B34FB`
/// (Core Specification Vol 3, Part B, 2.5.1), so `"180f"`, `"0x180F"`, `"0000180f"`
/// and the full form are the same value.
///
/// Encodes and decodes as the canonical string; decoding accepts every form `init?(_:)`
/// accepts and throws `DecodingError.dataCorrupted` for any other string.
public struct BluetoothUUID: Hashable, Sendable, CustomStringConvertible {
    /// The canonical lowercase 128-bit form, `"0000180f-0000-1000-8000-00805f9b34fb"`.
    public let description: String

    /// What follows the 32-bit part of every UUID built on the Bluetooth Base UUID.
    private static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// Parses a UUID in 16-bit, 32-bit or 128-bit form, in either case.
    ///
    /// - Parameter string: one of
    ///   - 16-bit: 4 hex digits, optionally after `0x`/`0X` (`"180f"`, `"0x180F"`);
    ///   - 32-bit: 8 hex digits, optionally after `0x`/`0X` (`"0000180f"`);
    ///   - 128-bit: 32 hex digits grouped 8-4-4-4-12 by dashes
    ///     (`"0000180F-0000-1000-8000-00805F9B34FB"`).
    /// - Returns: the UUID in canonical form, or `nil` for anything else: empty strings,
    ///   other lengths, non-hex or non-ASCII characters, dashes anywhere but the four
    ///   group boundaries, a 128-bit form without dashes, braces or surrounding spaces.
    public init?(_ string: String) {
        var bytes = Substring(string).utf8[...]
        let hasHexPrefix = bytes.count > 2 && bytes.first == UInt8(ascii: "0")
            && (bytes.dropFirst().first == UInt8(ascii: "x") || bytes.dropFirst().first == UInt8(ascii: "X"))
        if hasHexPrefix { bytes = bytes.dropFirst(2) }

        switch bytes.count {
        case 4 where bytes.allSatisfy(Self.isHexDigit):
            description = "0000" + Self.lowercased(bytes) + Self.baseSuffix
        case 8 where bytes.allSatisfy(Self.isHexDigit):
            description = Self.lowercased(bytes) + Self.baseSuffix
        case 36 where !hasHexPrefix && Self.isDashed128(bytes):
            description = Self.lowercased(bytes)
        default:
            return nil
        }
    }

    /// The 16-bit UUID `uuid16` on the Bluetooth Base UUID, e.g. `0x180F` gives
    /// `0000180f-0000-1000-8000-00805f9b34fb`.
    public init(uuid16: UInt16) {
        let hex = String(uuid16, radix: 16)
        description = "0000" + String(repeating: "0", count: 4 - hex.utf8.count) + hex + Self.baseSuffix
    }

    /// The 16-bit value when this UUID is `0000xxxx-0000-1000-8000-00805f9b34fb`
    /// (a 16-bit UUID on the Bluetooth Base UUID), else `nil`.
    public var uuid16: UInt16? {
        guard description.hasPrefix("0000"), description.hasSuffix(Self.baseSuffix) else {
            return nil
        }
        let utf8 = description.utf8
        let digits = utf8[utf8.index(utf8.startIndex, offsetBy: 4)..<utf8.index(utf8.startIndex, offsetBy: 8)]
        return UInt16(String(decoding: digits, as: UTF8.self), radix: 16)
    }

    /// The shortest faithful spelling: 4 lowercase hex digits (`"180f"`) for a 16-bit
    /// UUID on the Bluetooth Base UUID, else the full 128-bit form.
    public var shortString: String {
        guard let uuid16 else { return description }
        let hex = String(uuid16, radix: 16)
        return String(repeating: "0", count: 4 - hex.utf8.count) + hex
    }

    /// The UUID as messages name it, in one form everywhere: ``shortString`` (its JSON
    /// form), then its Bluetooth SIG name in parentheses where ``AssignedNumbers`` knows
    /// one: `180f (Battery)`; `5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b` alone.
    public var named: String {
        AssignedNumbers.name(for: self).map { "\(shortString) (\($0))" } ?? shortString
    }

    // MARK: - Well-known UUIDs (Bluetooth SIG Assigned Numbers, "16-bit UUIDs")

    /// Battery Service, 0x180F.
    public static let batteryService = BluetoothUUID(uuid16: 0x180F)
    /// Battery Level characteristic, 0x2A19: one byte, percent 0–100.
    public static let batteryLevel = BluetoothUUID(uuid16: 0x2A19)
    /// Device Information service, 0x180A.
    public static let deviceInformation = BluetoothUUID(uuid16: 0x180A)
    /// Firmware Revision String characteristic, 0x2A26 (UTF-8).
    public static let firmwareRevision = BluetoothUUID(uuid16: 0x2A26)
    /// Hardware Revision String characteristic, 0x2A27 (UTF-8).
    public static let hardwareRevision = BluetoothUUID(uuid16: 0x2A27)
    /// Software Revision String characteristic, 0x2A28 (UTF-8).
    public static let softwareRevision = BluetoothUUID(uuid16: 0x2A28)
    /// Manufacturer Name String characteristic, 0x2A29 (UTF-8).
    public static let manufacturerName = BluetoothUUID(uuid16: 0x2A29)
    /// Model Number String characteristic, 0x2A24 (UTF-8).
    public static let modelNumber = BluetoothUUID(uuid16: 0x2A24)
    /// Generic Access service, 0x1800.
    public static let genericAccess = BluetoothUUID(uuid16: 0x1800)
    /// Generic Attribute service, 0x1801.
    public static let genericAttribute = BluetoothUUID(uuid16: 0x1801)
    /// Client Characteristic Configuration descriptor, 0x2902.
    public static let clientCharacteristicConfiguration = BluetoothUUID(uuid16: 0x2902)

    // MARK: - Parsing helpers

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
             UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }

    /// 8-4-4-4-12 hex digits with dashes at offsets 8, 13, 18 and 23.
    private static func isDashed128(_ bytes: Substring.UTF8View.SubSequence) -> Bool {
        for (offset, byte) in bytes.enumerated() {
            let isDashPosition = offset == 8 || offset == 13 || offset == 18 || offset == 23
            if isDashPosition ? byte != UInt8(ascii: "-") : !isHexDigit(byte) { return false }
        }
        return true
    }

    /// ASCII-lowercases already validated bytes.
    private static func lowercased(_ bytes: Substring.UTF8View.SubSequence) -> String {
        String(decoding: bytes.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 + 0x20 : $0 },
               as: UTF8.self)
    }
}

extension BluetoothUUID: Codable {
    /// Decodes any form `init?(_:)` accepts; throws `DecodingError.dataCorrupted` for
    /// other strings, or a type mismatch when the value is not a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let uuid = BluetoothUUID(string) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Invalid UUID '\(string)': expected 16-bit (180f), 32-bit (0000180f) or 128-bit (0000180f-0000-1000-8000-00805f9b34fb) form"
            )
        }
        self = uuid
    }

    /// Encodes the canonical 128-bit string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
