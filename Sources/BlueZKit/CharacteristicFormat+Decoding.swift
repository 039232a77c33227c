extension CharacteristicFormat {
    /// Decodes `value` field by field: little-endian integers, scaled by the field's
    /// represented values; special raw values as `nil` with their meaning; a field whose
    /// presence bit does not say so skipped; strings and repeated fields to the end.
    ///
    /// - Returns: `.undecodable` with the reason when `value` is shorter than the fields
    ///   present need (`"truncated"`), longer than they explain (`"trailing bytes"`), or a
    ///   string is not UTF-8 (`"invalid UTF-8"`). Pure; never traps.
    public func decode(_ value: [UInt8]) -> DecodedCharacteristicValue {
        var decoded: [DecodedCharacteristicValue.Field] = []
        decoded.reserveCapacity(fields.count)
        var flags: [Int: UInt64] = [:]
        var offset = 0
        for (index, field) in fields.enumerated() {
            if let presence = field.presence {
                guard let bits = flags[presence.flags] else { return .undecodable(name: name, reason: "truncated") }
                if ((bits >> UInt64(presence.bit)) & 1 == 1) != presence.set { continue }
            }
            let remaining = value.count - offset
            switch field.type {
            case .utf8:
                guard let text = String(validating: value[offset...], as: UTF8.self) else {
                    return .undecodable(name: name, reason: "invalid UTF-8")
                }
                decoded.append(.init(name: field.name, value: .text(text), unit: field.unit))
                offset = value.count
            case .repeated(let element):
                let size = element.size ?? 1
                guard remaining % size == 0 else { return .undecodable(name: name, reason: "trailing bytes") }
                var list: [DecodedCharacteristicValue.Value] = []
                while offset < value.count {
                    guard let item = Self.read(element, of: field, from: value, at: offset).value else {
                        return .undecodable(name: name, reason: "special value in a list")
                    }
                    list.append(item)
                    offset += size
                }
                decoded.append(.init(name: field.name, value: .list(list), unit: field.unit))
            default:
                let size = field.type.size ?? 0
                guard remaining >= size else { return .undecodable(name: name, reason: "truncated") }
                if case .flags = field.type { flags[index] = Self.unsigned(value, at: offset, bytes: size) }
                decoded.append(Self.read(field.type, of: field, from: value, at: offset))
                offset += size
            }
        }
        guard offset == value.count else { return .undecodable(name: name, reason: "trailing bytes") }
        return .decoded(name: name, fields: decoded)
    }

    /// One value of `type` at `offset`, which the caller has checked fits.
    private static func read(_ type: FieldType, of spec: Field, from value: [UInt8], at offset: Int)
        -> DecodedCharacteristicValue.Field
    {
        func field(_ decoded: DecodedCharacteristicValue.Value?, status: String? = nil) -> DecodedCharacteristicValue.Field {
            .init(name: spec.name, value: decoded, unit: spec.unit, status: status)
        }
        switch type {
        case .unsigned(let bytes), .signed(let bytes):
            let raw = unsigned(value, at: offset, bytes: bytes)
            if let meaning = spec.special[raw] { return field(nil, status: meaning) }
            var integer = Int(truncatingIfNeeded: raw)
            if case .signed = type {
                let unused = 64 - 8 * bytes
                integer = Int(truncatingIfNeeded: Int64(bitPattern: raw << UInt64(unused)) >> Int64(unused))
            }
            guard let scale = spec.scale else { return field(.integer(integer)) }
            return field(.number(scale.apply(Double(integer))))
        case .flags(let bytes):
            return field(.integer(Int(unsigned(value, at: offset, bytes: bytes))))
        case .medfloat16:
            let raw = UInt16(truncatingIfNeeded: unsigned(value, at: offset, bytes: 2))
            return medfloat(mantissa: Int(raw & 0x0FFF), mantissaBits: 12, exponent: Int(raw >> 12), exponentBits: 4, field)
        case .medfloat32:
            let raw = UInt32(truncatingIfNeeded: unsigned(value, at: offset, bytes: 4))
            return medfloat(mantissa: Int(raw & 0xFF_FFFF), mantissaBits: 24, exponent: Int(raw >> 24), exponentBits: 8, field)
        case .float32:
            let float = Float(bitPattern: UInt32(truncatingIfNeeded: unsigned(value, at: offset, bytes: 4)))
            return float.isFinite ? field(.number(Double(float))) : field(nil, status: float.isNaN ? "NaN" : "infinity")
        case .float64:
            let double = Double(bitPattern: unsigned(value, at: offset, bytes: 8))
            return double.isFinite ? field(.number(double)) : field(nil, status: double.isNaN ? "NaN" : "infinity")
        case .utf8, .repeated:
            return field(nil, status: "undecodable")  // read whole by decode(_:), never here
        }
    }

    /// An IEEE 11073-20601 SFLOAT or FLOAT (section 8.6.2 and 8.6.3 of ISO/IEEE 11073-20601):
    /// mantissa × 10^exponent, both two's complement; the reserved mantissas 0x7FF/0x7FFFFF
    /// (NaN), 0x800/0x800000 (NRes), 0x7FE/0x7FFFFE (+INFINITY), 0x802/0x800002 (-INFINITY)
    /// and 0x801/0x800001 (reserved for future use) with exponent 0 give no value.
    private static func medfloat(mantissa: Int, mantissaBits: Int, exponent: Int, exponentBits: Int,
                                 _ field: (DecodedCharacteristicValue.Value?, String?) -> DecodedCharacteristicValue.Field)
        -> DecodedCharacteristicValue.Field
    {
        let top = 1 << (mantissaBits - 1)
        if exponent == 0 {
            switch mantissa {
            case top - 1: return field(nil, "NaN")
            case top: return field(nil, "NRes")
            case top - 2: return field(nil, "+INFINITY")
            case top + 2: return field(nil, "-INFINITY")
            case top + 1: return field(nil, "reserved")
            default: break
            }
        }
        let signedMantissa = mantissa >= top ? mantissa - 2 * top : mantissa
        let signedExponent = exponent >= 1 << (exponentBits - 1) ? exponent - (1 << exponentBits) : exponent
        let scale = Scale(multiplier: 1, decimalExponent: signedExponent, binaryExponent: 0)
        return field(.number(scale.apply(Double(signedMantissa))), nil)
    }

    /// The little-endian unsigned integer of `bytes` bytes (at most 8) at `offset`.
    static func unsigned(_ value: [UInt8], at offset: Int, bytes: Int) -> UInt64 {
        var raw: UInt64 = 0
        for index in stride(from: bytes - 1, through: 0, by: -1) {
            raw = raw << 8 | UInt64(value[offset + index])
        }
        return raw
    }
}
