import DBusKit

/// Typed reads of one packed value, with ``DBusValue``'s typed accessors' rules: variants
/// are looked through, and a value of another type reads as nil (and is skipped).
extension PackedReader {
    private static let variant = UInt8(ascii: "v")

    /// Past any variant wrappers: the inner value's type code, not consumed; nil at the end.
    mutating func unwrappedCode() -> UInt8? {
        while offset < buffer.count, buffer[offset] == Self.variant { offset += 1 }
        return offset < buffer.count ? buffer[offset] : nil
    }

    /// `o` (``DBusValue/objectPath``).
    mutating func objectPathValue() -> ObjectPath? {
        guard unwrappedCode() == UInt8(ascii: "o") else { skipValue(); return nil }
        offset += 1
        return ObjectPath(readString())
    }

    /// `s` (``DBusValue/string``).
    mutating func stringValue() -> String? {
        guard unwrappedCode() == UInt8(ascii: "s") else { skipValue(); return nil }
        offset += 1
        return readString()
    }

    /// `b` (``DBusValue/bool``).
    mutating func boolValue() -> Bool? {
        guard unwrappedCode() == UInt8(ascii: "b") else { skipValue(); return nil }
        offset += 1
        return byte() != 0
    }

    /// Any integer type that fits in an `Int` (``DBusValue/integer``).
    mutating func integerValue() -> Int? {
        guard let code = unwrappedCode() else { return nil }
        offset += 1
        switch code {
        case UInt8(ascii: "y"): return Int(byte())
        case UInt8(ascii: "n"): return Int(readFixed(Int16.self))
        case UInt8(ascii: "q"): return Int(readFixed(UInt16.self))
        case UInt8(ascii: "i"): return Int(readFixed(Int32.self))
        case UInt8(ascii: "u"): return Int(readFixed(UInt32.self))
        case UInt8(ascii: "x"): return Int(readFixed(Int64.self))
        case UInt8(ascii: "t"):
            let v = readFixed(UInt64.self)
            return v <= UInt64(Int.max) ? Int(v) : nil
        default:
            offset -= 1
            skipValue()
            return nil
        }
    }

    /// `ay`, or an array of `y` values (``DBusValue/bytes``).
    mutating func bytesValue() -> [UInt8]? {
        let start = offset
        if unwrappedCode() == UInt8(ascii: "A") {
            offset += 1
            let count = min(readLength(), buffer.count - offset)
            defer { offset += count }
            return Array(buffer[offset..<offset + count])
        }
        offset = start
        return homogeneousArray(of: UInt8(ascii: "y"), signatureMustMatch: true) { $0.byte() }
    }

    /// `as`, each element a string (``DBusValue/stringArray``).
    mutating func stringArrayValue() -> [String]? {
        homogeneousArray(of: UInt8(ascii: "s")) { $0.readString() }
    }

    /// The elements of an array whose every element has the type code `code`, each read by
    /// `element` (placed just after the element's code); nil, and the value skipped, for
    /// anything else (another type, or an element of another type: no variant is looked
    /// through inside, as ``DBusValue``'s accessors do not). With `signatureMustMatch`, the
    /// array's element signature must also be that one code (``DBusValue/bytes`` takes
    /// `.array("y", …)` only, even when empty).
    private mutating func homogeneousArray<T>(of code: UInt8, signatureMustMatch: Bool = false,
                                              _ element: (inout PackedReader) -> T) -> [T]? {
        let start = offset
        guard unwrappedCode() == UInt8(ascii: "a") else { skipValue(); return nil }
        offset += 1
        let signatureLength = readLength()
        let signatureStart = offset
        offset = min(buffer.count, offset + signatureLength)
        if signatureMustMatch, signatureLength != 1 || signatureStart >= buffer.count || buffer[signatureStart] != code {
            offset = start
            skipValue()
            return nil
        }
        let count = readLength()
        var out = [T]()
        out.reserveCapacity(min(count, buffer.count - offset))
        for _ in 0..<count {
            guard offset < buffer.count, buffer[offset] == code else {
                offset = start
                skipValue()
                return nil
            }
            offset += 1
            out.append(element(&self))
        }
        return out
    }

    /// Calls `body` with readers at each entry's key and value of a dictionary
    /// (``DBusValue/dictionaryEntries``); nothing for a value of another type. `body` may
    /// read or leave either.
    mutating func forEachDictionaryEntry(_ body: (inout PackedReader, inout PackedReader) -> Void) {
        guard unwrappedCode() == UInt8(ascii: "e") else { skipValue(); return }
        offset += 1
        skipString()
        skipString()
        let count = readLength()
        for _ in 0..<count where offset < buffer.count {
            var key = self
            let keyStart = offset
            skipValue()
            var value = self
            let valueStart = offset
            skipValue()
            let end = offset
            key.offset = keyStart
            value.offset = valueStart
            body(&key, &value)
            offset = end
        }
    }
}
