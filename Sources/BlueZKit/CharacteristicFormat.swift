#if canImport(Glibc)
import Glibc
#endif

/// How the value of a characteristic is laid out: its fields in order, each with its type,
/// unit, scaling, special values and presence condition, as the Bluetooth SIG's GATT
/// Specification Supplement (GSS) defines them.
///
/// Source: the GSS in YAML (gss/org.bluetooth.characteristic.*.yaml), with units from the
/// assigned numbers (uuids/units.yaml), turned into `CharacteristicFormats+Tables.swift` by
/// `scripts/gen-gatt-formats` (never edited by hand). Characteristics whose structure the
/// decoder cannot represent (fields that are structures of several fields, conditions other
/// than one flag bit, sub-byte fields) are not in the table: ``format(for:)`` is `nil` for them.
///
/// A characteristic that is not in the table but has a Characteristic Presentation Format
/// descriptor (0x2904) gets its format from it: ``init(presentationFormat:name:)``.
///
/// Decode a value with ``decode(_:)``, or at once with ``decode(uuid:value:)``.
public struct CharacteristicFormat: Sendable, Equatable {
    /// The characteristic's 16-bit UUID, such as 0x2A6E; `nil` for a format read from a
    /// Presentation Format descriptor.
    public let uuid16: UInt16?
    /// The characteristic's name in the GSS, such as `"Temperature"`.
    public let name: String
    /// The fields in the order they come in the value.
    public let fields: [Field]

    init(uuid16: UInt16?, name: String, fields: [Field]) {
        self.uuid16 = uuid16
        self.name = name
        self.fields = fields
    }

    /// The format the GSS gives the characteristic `uuid`, or `nil` when `uuid` is not a SIG
    /// characteristic the table has (a vendor's 128-bit UUID, a service, a characteristic
    /// whose structure the decoder cannot represent).
    /// - Parameter uuid: for example `BluetoothUUID.batteryLevel`.
    public static func format(for uuid: BluetoothUUID) -> CharacteristicFormat? {
        uuid.uuid16.flatMap { byUUID16[$0] }
    }

    /// The generated ``table`` by 16-bit UUID, made at the first look-up.
    private static let byUUID16: [UInt16: CharacteristicFormat] =
        Dictionary(table.compactMap { format in format.uuid16.map { ($0, format) } }, uniquingKeysWith: { first, _ in first })

    /// Decodes `value` of the characteristic `uuid` by the GSS's format for it; `nil` when the
    /// table has no format for `uuid` (``format(for:)``).
    ///
    /// - Returns: the fields, or `.undecodable` when the bytes are not what the format
    ///   describes (too short, or bytes left over).
    public static func decode(uuid: BluetoothUUID, value: [UInt8]) -> DecodedCharacteristicValue? {
        format(for: uuid)?.decode(value)
    }

    /// One field of a characteristic's value.
    public struct Field: Sendable, Equatable {
        /// The field's name in the GSS, such as `"Heart Rate Measurement Value (8 bit resolution)"`.
        public let name: String
        /// How its bytes are read.
        public let type: FieldType
        /// The unit of the represented value, as a person reads it: the name in parentheses of
        /// the SIG's unit (`"degree Celsius"` for org.bluetooth.unit.thermodynamic_temperature.degree_celsius),
        /// `nil` when unitless or not given.
        public let unit: String?
        /// How the raw integer becomes the represented value; `nil` for none (the raw value is it).
        public let scale: Scale?
        /// Raw values (the field's bits, as unsigned) that stand for no measurement, with what
        /// they mean in the GSS's words, such as `0x8000: "value is not known"`.
        public let special: [UInt64: String]
        /// When the field is in the value; `nil`: always.
        public let presence: Presence?

        init(_ name: String, _ type: FieldType, unit: String? = nil, scale: Scale? = nil, special: [UInt64: String] = [:],
             presentIf presence: Presence? = nil) {
            self.name = name
            self.type = type
            self.unit = unit
            self.scale = scale
            self.special = special
            self.presence = presence
        }
    }

    /// How a field's bytes are read; multi-byte values are little-endian (GSS section 2.2).
    public indirect enum FieldType: Sendable, Equatable {
        /// An unsigned integer of 1 to 6 bytes (uint8 ... uint48).
        case unsigned(bytes: Int)
        /// A two's complement integer of 1 to 4 bytes (sint8 ... sint32).
        case signed(bytes: Int)
        /// IEEE 11073-20601 SFLOAT: a 4-bit exponent and a 12-bit mantissa, 2 bytes.
        case medfloat16
        /// IEEE 11073-20601 FLOAT: an 8-bit exponent and a 24-bit mantissa, 4 bytes.
        case medfloat32
        /// IEEE 754 binary32.
        case float32
        /// IEEE 754 binary64.
        case float64
        /// UTF-8 text, the rest of the value.
        case utf8
        /// A bit field (boolean[n]) of 1 to 4 bytes; other fields' presence depends on its bits.
        case flags(bytes: Int)
        /// The element type again and again to the end of the value (uint16[n]).
        case repeated(FieldType)

        /// The bytes one value of this type takes; `nil` when it takes the rest of the value.
        var size: Int? {
            switch self {
            case .unsigned(let bytes), .signed(let bytes), .flags(let bytes): bytes
            case .medfloat16: 2
            case .medfloat32, .float32: 4
            case .float64: 8
            case .utf8, .repeated: nil
            }
        }
    }

    /// The GSS's represented values ("Represented values: M = 1, d = -2, b = 0"):
    /// value = raw × M × 10^d × 2^b, b being a binary exponent.
    public struct Scale: Sendable, Equatable {
        /// M, the multiplier.
        public let multiplier: Int
        /// d, the decimal exponent.
        public let decimalExponent: Int
        /// b, the binary exponent.
        public let binaryExponent: Int

        public init(multiplier: Int, decimalExponent: Int, binaryExponent: Int) {
            self.multiplier = multiplier
            self.decimalExponent = decimalExponent
            self.binaryExponent = binaryExponent
        }

        /// The represented value of `raw`. A negative decimal exponent divides by the power of
        /// ten, so a value with d digits after the point is the nearest double to it (2058 → 20.58).
        public func apply(_ raw: Double) -> Double {
            let value = raw * Double(multiplier)
            let ten = pow(10, Double(abs(decimalExponent)))
            return (decimalExponent < 0 ? value / ten : value * ten) * pow(2, Double(binaryExponent))
        }
    }

    /// "Present if bit N of Flags field is set to V": the field is in the value when bit `bit`
    /// of the flags field at index `flags` is `set`.
    public struct Presence: Sendable, Equatable {
        /// The index in ``CharacteristicFormat/fields`` of the flags field.
        public let flags: Int
        /// The bit, 0 being the least significant of the first byte.
        public let bit: Int
        /// The bit's value that makes the field present.
        public let set: Bool

        init(flags: Int, bit: Int, set: Bool) {
            self.flags = flags
            self.bit = bit
            self.set = set
        }
    }
}
