/// A characteristic's value decoded by its ``CharacteristicFormat``: the fields present, in
/// order, each with its represented value and unit; or why the bytes could not be decoded.
public enum DecodedCharacteristicValue: Sendable, Equatable {
    /// The characteristic's name (``CharacteristicFormat/name``) and the fields the value has
    /// (a field whose presence condition is not met is left out).
    case decoded(name: String, fields: [Field])
    /// The bytes are not what the format describes: `"truncated"` (too short for a field
    /// present), `"trailing bytes"` (bytes no field explains), `"invalid UTF-8"`. Nothing is guessed.
    case undecodable(name: String, reason: String)

    /// One field of a decoded value.
    public struct Field: Sendable, Equatable {
        /// The field's GSS name, such as `"Temperature"`.
        public let name: String
        /// The represented value; `nil` when the raw value is a special value or a medfloat's
        /// NaN, NRes or infinity (``status`` says which).
        public let value: Value?
        /// The unit as a person reads it, such as `"degree Celsius"`; `nil` when unitless.
        public let unit: String?
        /// What a special raw value stands for, such as `"value is not known"`
        /// (the GSS's words, or for a medfloat `"NaN"`, `"NRes"`, `"+INFINITY"`, `"-INFINITY"`,
        /// `"reserved"`); `nil` for a measured value.
        public let status: String?

        public init(name: String, value: Value?, unit: String? = nil, status: String? = nil) {
            self.name = name
            self.value = value
            self.unit = unit
            self.status = status
        }
    }

    /// A field's represented value.
    public enum Value: Sendable, Equatable {
        /// An integer field without scaling, or a flags field (its bits as an unsigned number).
        case integer(Int)
        /// A scaled integer (raw × M × 10^d × 2^b) or a floating-point field.
        case number(Double)
        /// A string field.
        case text(String)
        /// A repeated field (uint16[n]), each element as ``integer(_:)`` or ``number(_:)`` would be.
        case list([Value])
    }

    /// The characteristic's name, decoded or not.
    public var name: String {
        switch self {
        case .decoded(let name, _), .undecodable(let name, _): name
        }
    }
}
