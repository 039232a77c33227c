extension CharacteristicFormat {
    /// The Characteristic Presentation Format descriptor's UUID, 0x2904.
    public static let presentationFormatDescriptor = BluetoothUUID(uuid16: 0x2904)

    /// The format a Characteristic Presentation Format descriptor (0x2904) gives a
    /// characteristic: one field of its format, scaled by its exponent, in its unit.
    ///
    /// The descriptor's value is 7 bytes (Core Specification Vol 3 Part G 3.3.3.5): Format
    /// (1 byte, the assigned numbers' core/formattypes.yaml), Exponent (sint8: value =
    /// raw × 10^Exponent, for the integer formats only), Unit (a 16-bit org.bluetooth.unit
    /// UUID, little-endian), Name Space and Description (not used here).
    ///
    /// - Parameters:
    ///   - value: the descriptor's value, as read.
    ///   - name: the name to give the characteristic and its field, such as its UUID.
    /// - Returns: `nil` when `value` is not 7 bytes or its format is one the decoder cannot
    ///   read (boolean and sub-byte integers, uint12/sint12, 64- and 128-bit integers,
    ///   uint16[2], utf16s, struct, medASN1). A unit the SIG's list does not have, or
    ///   unitless (0x2700), gives no unit.
    public init?(presentationFormat value: [UInt8], name: String) {
        guard value.count == 7, let (type, usesExponent) = Self.presentationFormatTypes[value[0]] else { return nil }
        let exponent = Int(Int8(bitPattern: value[1]))
        let unit = Self.unitNames[UInt16(value[2]) | UInt16(value[3]) << 8]
        let scale = usesExponent && exponent != 0 ? Scale(multiplier: 1, decimalExponent: exponent, binaryExponent: 0) : nil
        self.init(uuid16: nil, name: name, fields: [Field(name, type, unit: unit, scale: scale)])
    }
}
