/// A 48-bit Bluetooth device address (BD_ADDR), such as `C0:FF:EE:00:00:01`.
///
/// The value is kept in BlueZ's canonical form: six two-digit hex groups, uppercase,
/// separated by `:` (the form of org.bluez.Device1's `Address` property, BlueZ
/// doc/org.bluez.Device.rst). It says nothing about the address *type* (public or
/// random); that is the separate `AddressType` property.
///
/// Encodes and decodes as that string (`"C0:FF:EE:00:00:01"`); decoding any other
/// string throws `DecodingError.dataCorrupted`.
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// The canonical form, `"AA:BB:CC:DD:EE:FF"` (uppercase, 17 ASCII characters).
    public let description: String

    /// Parses an address written as six two-hex-digit groups separated by `:`.
    ///
    /// - Parameter string: for example `"c0:ff:ee:00:00:01"`; hex digits in either case.
    /// - Returns: the address normalised to uppercase, or `nil` unless `string` is
    ///   exactly 17 ASCII characters `XX:XX:XX:XX:XX:XX` (no spaces, no `-`, no other
    ///   separators, no missing leading zeros).
    public init?(_ string: String) {
        // BlueZ sends addresses in canonical form already: kept as they are (no copy).
        if Self.isCanonical(string) {
            description = string
            return
        }
        guard let canonical = Self.canonicalize(string.utf8, separator: UInt8(ascii: ":")) else {
            return nil
        }
        description = canonical
    }

    /// Whether `string` is six uppercase hex pairs separated by `:`.
    private static func isCanonical(_ string: String) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count == 17 else { return false }
            for (offset, byte) in bytes.enumerated() {
                if offset % 3 == 2 {
                    guard byte == UInt8(ascii: ":") else { return false }
                } else {
                    guard uppercaseHexDigit(byte) == byte else { return false }
                }
            }
            return true
        } ?? false
    }

    /// Parses the device address out of a BlueZ device object path.
    ///
    /// - Parameter devicePath: for example `"/org/bluez/hci0/dev_C0_FF_EE_00_00_01"`;
    ///   only the last path component is examined, and it must be `dev_` followed by
    ///   six two-hex-digit groups separated by `_` (BlueZ doc/org.bluez.Device.rst,
    ///   "Object path").
    /// - Returns: the address, or `nil` when the last component has another form (for
    ///   example a GATT service path `…/dev_C0_FF_EE_00_00_01/service0010`).
    public init?(devicePath: String) {
        let utf8 = devicePath.utf8
        let lastComponent = utf8.lastIndex(of: UInt8(ascii: "/")).map { utf8[utf8.index(after: $0)...] }
            ?? utf8[...]
        let prefix = "dev_".utf8
        guard lastComponent.starts(with: prefix) else { return nil }
        let groups = lastComponent.dropFirst(prefix.count)
        guard let canonical = Self.canonicalize(groups, separator: UInt8(ascii: "_")) else {
            return nil
        }
        description = canonical
    }

    /// The last component of this device's BlueZ object path, `"dev_AA_BB_CC_DD_EE_FF"`
    /// (BlueZ doc/org.bluez.Device.rst: `/org/bluez/{hci0,hci1,...}/dev_XX_XX_XX_XX_XX_XX`).
    public var devicePathComponent: String {
        "dev_" + String(description.map { $0 == ":" ? "_" : $0 })
    }

    /// The address with `-` separators, `"AA-BB-CC-DD-EE-FF"`: the `Alias` BlueZ gives
    /// a device that has no name (BlueZ doc/org.bluez.Device.rst, `Alias`).
    public var dashed: String {
        String(decoding: description.utf8.map { $0 == UInt8(ascii: ":") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
    }

    /// `name` when it is a real name for this device: nil when missing, empty, or only this
    /// address (``isSpelled(by:)``), as Device1.Name is for a device that has none.
    func realName(_ name: String?) -> String? {
        guard let name, !name.isEmpty, !isSpelled(by: name) else { return nil }
        return name
    }

    /// Whether `text` is this address itself, with `:` or with `-` separators (what BlueZ
    /// shows for a device without a name), in either case (a device that names itself by
    /// its address in lower case has no name either), compared byte by byte without building
    /// either.
    func isSpelled(by text: String) -> Bool {
        guard text.utf8.count == 17 else { return false }
        let colon = UInt8(ascii: ":"), dash = UInt8(ascii: "-")
        var separator: UInt8?
        for (index, (byte, own)) in zip(text.utf8, description.utf8).enumerated() {
            if index % 3 == 2 {
                guard byte == colon || byte == dash, separator == nil || separator == byte else { return false }
                separator = byte
            } else {
                // ASCII letters fold to upper case; the address's own digits are 0-9 and A-F.
                let upper = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 32 : byte
                guard upper == own else { return false }
            }
        }
        return true
    }

    /// Validates `XX?XX?XX?XX?XX?XX` (`?` = `separator`) and returns it uppercased with
    /// `:` separators, or `nil`.
    private static func canonicalize<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, separator: UInt8
    ) -> String? {
        guard bytes.count == 17 else { return nil }
        var valid = true
        let canonical = String(unsafeUninitializedCapacity: 17) { out in
            for (offset, byte) in bytes.enumerated() {
                if offset % 3 == 2 {
                    guard byte == separator else { valid = false; return 0 }
                    out[offset] = UInt8(ascii: ":")
                } else {
                    guard let upper = uppercaseHexDigit(byte) else { valid = false; return 0 }
                    out[offset] = upper
                }
            }
            return 17
        }
        return valid ? canonical : nil
    }

    /// The ASCII hex digit `byte` in uppercase, or `nil` if it is not one.
    private static func uppercaseHexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "F"): byte
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - 0x20
        default: nil
        }
    }
}

extension BluetoothAddress: Codable {
    /// Decodes the string form; throws `DecodingError.dataCorrupted` when it is not six
    /// hex pairs separated by `:`, or a type mismatch when the value is not a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let address = BluetoothAddress(string) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Invalid Bluetooth address '\(string)': expected six hex pairs like C0:FF:EE:00:00:01"
            )
        }
        self = address
    }

    /// Encodes the canonical string, `"AA:BB:CC:DD:EE:FF"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
