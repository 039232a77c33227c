import DBusKit

// The writing half of ``PackedProperties``'s layout (described there).

/// Appends packed keys and values.
struct PackedWriter {
    var bytes = [UInt8]()

    mutating func writeKey(_ key: String) {
        if let index = PackedProperties.index(of: key) {
            bytes.append(index)
        } else {
            bytes.append(PackedProperties.other)
            writeString(key)
        }
    }

    mutating func writeLength(_ value: Int) {
        var v = UInt(value)
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func writeString(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            writeLength(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func writeFixed<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends `value`; false when it holds something that cannot be packed (a file
    /// descriptor), the bytes then being unusable.
    mutating func writeValue(_ value: DBusValue) -> Bool {
        switch value {
        case .byte(let v): bytes.append(UInt8(ascii: "y")); bytes.append(v)
        case .boolean(let v): bytes.append(UInt8(ascii: "b")); bytes.append(v ? 1 : 0)
        case .int16(let v): bytes.append(UInt8(ascii: "n")); writeFixed(v)
        case .uint16(let v): bytes.append(UInt8(ascii: "q")); writeFixed(v)
        case .int32(let v): bytes.append(UInt8(ascii: "i")); writeFixed(v)
        case .uint32(let v): bytes.append(UInt8(ascii: "u")); writeFixed(v)
        case .int64(let v): bytes.append(UInt8(ascii: "x")); writeFixed(v)
        case .uint64(let v): bytes.append(UInt8(ascii: "t")); writeFixed(v)
        case .double(let v): bytes.append(UInt8(ascii: "d")); writeFixed(v.bitPattern)
        case .string(let s): bytes.append(UInt8(ascii: "s")); writeString(s)
        case .objectPath(let p): bytes.append(UInt8(ascii: "o")); writeString(p.rawValue)
        case .signature(let s): bytes.append(UInt8(ascii: "g")); writeString(s)
        case .unixFD: return false
        case .bytes(let b):
            bytes.append(UInt8(ascii: "A"))
            writeLength(b.count)
            bytes.append(contentsOf: b)
        case .array(let element, let values):
            bytes.append(UInt8(ascii: "a"))
            writeString(element)
            writeLength(values.count)
            for v in values { guard writeValue(v) else { return false } }
        case .dictionary(let keySignature, let valueSignature, let entries):
            bytes.append(UInt8(ascii: "e"))
            writeString(keySignature)
            writeString(valueSignature)
            writeLength(entries.count)
            for entry in entries {
                guard writeValue(entry.key), writeValue(entry.value) else { return false }
            }
        case .structure(let fields):
            bytes.append(UInt8(ascii: "r"))
            writeLength(fields.count)
            for v in fields { guard writeValue(v) else { return false } }
        case .variant(let inner):
            bytes.append(UInt8(ascii: "v"))
            return writeValue(inner)
        }
        return true
    }
}
