internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Decodes a received message's body straight from its wire form (the D-Bus specification,
/// "Message Format" and "Marshaling (Wire Format)"), instead of walking it with libdbus's
/// iterator, whose `dbus_message_iter_next` alone costs some 470 instructions a call (a
/// scan's InterfacesAdded has about 70 of them).
///
/// It takes only what it is sure of: a little-endian message (what every Linux machine
/// blectl runs on sends) without Unix file descriptors, whose values fit their signature
/// to the byte. For anything else it returns nil and ``MessageDecoder`` uses the iterator,
/// so the result is the same either way (DBusKitTests/WireDecoderTests checks both on the
/// same messages). libdbus has already validated every received message (signature, UTF-8,
/// lengths, padding); the bounds are checked again here all the same.
enum WireDecoder {
    /// The values of `raw`'s body, or nil when this decoder does not take the message.
    static func body(of raw: OpaquePointer) -> [DBusValue]? {
        guard let signature = dbus_message_get_signature(raw) else { return nil }
        let signatureLength = strlen(signature)
        if signatureLength == 0 { return [] }
        let sig = UnsafeRawBufferPointer(start: signature, count: signatureLength)
        if sig.contains(UInt8(ascii: "h")) { return nil }   // descriptors live beside the bytes
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &buffer, &length) != 0, let buffer else { return nil }
        defer { dbus_free(buffer) }
        let bytes = UnsafeRawBufferPointer(start: buffer, count: Int(length))
        // Fixed header: endianness, type, flags, version, body length, serial, then the
        // header fields array (its length at 12), padded to 8; the body follows.
        guard bytes.count >= 16, bytes[0] == UInt8(ascii: "l") else { return nil }
        let bodyLength = Int(bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian)
        let fieldsLength = Int(bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian)
        let bodyStart = (16 + fieldsLength + 7) & ~7
        guard bodyStart + bodyLength <= bytes.count else { return nil }
        var parser = WireParser(data: bytes, offset: bodyStart, end: bodyStart + bodyLength)
        var values = [DBusValue]()
        values.reserveCapacity(sig.count)   // at most one value per type code
        var i = 0
        while i < sig.count {
            guard let typeEnd = WireParser.completeTypeEnd(sig, from: i),
                  let value = parser.value(sig, i, typeEnd) else { return nil }
            values.append(value)
            i = typeEnd
        }
        return parser.offset == parser.end ? values : nil
    }
}

/// Reads marshalled values; offsets count from the message's first byte, as the
/// specification's alignment does.
private struct WireParser {
    let data: UnsafeRawBufferPointer
    var offset: Int
    let end: Int

    /// The index just past the single complete type that starts at `i` in `sig`; nil when
    /// there is none.
    static func completeTypeEnd(_ sig: UnsafeRawBufferPointer, from i: Int) -> Int? {
        guard i < sig.count else { return nil }
        switch sig[i] {
        case UInt8(ascii: "a"):
            return completeTypeEnd(sig, from: i + 1)
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            var depth = 0
            var j = i
            while j < sig.count {
                switch sig[j] {
                case UInt8(ascii: "("), UInt8(ascii: "{"): depth += 1
                case UInt8(ascii: ")"), UInt8(ascii: "}"):
                    depth -= 1
                    if depth == 0 { return j + 1 }
                default: break
                }
                j += 1
            }
            return nil
        default:
            return i + 1
        }
    }

    /// The alignment of values of the type whose code is `code`.
    static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 4   // b i u s o a h
        }
    }

    mutating func align(_ n: Int) -> Bool {
        let aligned = (offset + n - 1) & ~(n - 1)
        guard aligned <= end else { return false }
        offset = aligned
        return true
    }

    mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard align(size), offset + size <= end else { return nil }
        defer { offset += size }
        return T(littleEndian: data.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// `s` and `o`: a 32-bit length, the UTF-8, a NUL.
    mutating func string() -> String? {
        guard let length = fixed(UInt32.self).map(Int.init), offset + length + 1 <= end else { return nil }
        defer { offset += length + 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: data[offset..<offset + length]), as: UTF8.self)
    }

    /// `g`: an 8-bit length, the signature, a NUL; as the bytes (within `data`).
    mutating func signature() -> UnsafeRawBufferPointer? {
        guard offset < end else { return nil }
        let length = Int(data[offset])
        guard offset + 1 + length + 1 <= end else { return nil }
        defer { offset += 1 + length + 1 }
        return UnsafeRawBufferPointer(rebasing: data[offset + 1..<offset + 1 + length])
    }

    static func text(_ sig: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: sig[start..<end]), as: UTF8.self)
    }

    /// The value of the complete type `sig[start..<typeEnd]`; nil when the bytes do not hold
    /// one (or it holds a descriptor).
    mutating func value(_ sig: UnsafeRawBufferPointer, _ start: Int, _ typeEnd: Int) -> DBusValue? {
        switch sig[start] {
        case UInt8(ascii: "y"):
            guard offset < end else { return nil }
            defer { offset += 1 }
            return .byte(data[offset])
        case UInt8(ascii: "b"):
            guard let v = fixed(UInt32.self), v <= 1 else { return nil }
            return .boolean(v == 1)
        case UInt8(ascii: "n"): return fixed(Int16.self).map { .int16($0) }
        case UInt8(ascii: "q"): return fixed(UInt16.self).map { .uint16($0) }
        case UInt8(ascii: "i"): return fixed(Int32.self).map { .int32($0) }
        case UInt8(ascii: "u"): return fixed(UInt32.self).map { .uint32($0) }
        case UInt8(ascii: "x"): return fixed(Int64.self).map { .int64($0) }
        case UInt8(ascii: "t"): return fixed(UInt64.self).map { .uint64($0) }
        case UInt8(ascii: "d"): return fixed(UInt64.self).map { .double(Double(bitPattern: $0)) }
        case UInt8(ascii: "s"): return string().map { .string($0) }
        case UInt8(ascii: "o"): return string().map { .objectPath(ObjectPath($0)) }
        case UInt8(ascii: "g"): return signature().map { .signature(Self.text($0, 0, $0.count)) }
        case UInt8(ascii: "v"):
            guard let inner = signature(), !inner.isEmpty,
                  Self.completeTypeEnd(inner, from: 0) == inner.count,
                  !inner.contains(UInt8(ascii: "h")),
                  let value = value(inner, 0, inner.count) else { return nil }
            return .variant(value)
        case UInt8(ascii: "("):
            guard align(8) else { return nil }
            var fields = [DBusValue]()
            var i = start + 1
            while i < typeEnd - 1 {
                guard let fieldEnd = Self.completeTypeEnd(sig, from: i), fieldEnd < typeEnd,
                      let field = value(sig, i, fieldEnd) else { return nil }
                fields.append(field)
                i = fieldEnd
            }
            return .structure(fields)
        case UInt8(ascii: "a"):
            guard let byteLength = fixed(UInt32.self).map(Int.init) else { return nil }
            let element = start + 1
            // The padding to the element's alignment is there even when the array is empty.
            guard align(Self.alignment(of: sig[element])) else { return nil }
            let arrayEnd = offset + byteLength
            guard arrayEnd <= end else { return nil }
            switch sig[element] {
            case UInt8(ascii: "y"):
                defer { offset = arrayEnd }
                return .bytes(Array(UnsafeRawBufferPointer(rebasing: data[offset..<arrayEnd])))
            case UInt8(ascii: "{"):
                // {KV}: one basic key type, one complete value type.
                let key = element + 1
                let valueEnd = typeEnd - 1
                guard key + 1 < valueEnd else { return nil }
                var entries = [DBusValue.DictEntry]()
                // An entry starts 8-aligned and, for the usual {sv} and {qv}, takes 16 bytes
                // or more: grown from there past 16 (a GetManagedObjects reply's outer array
                // may run to megabytes).
                entries.reserveCapacity(min(byteLength / 16, 16))
                while offset < arrayEnd {
                    guard align(8),
                          let k = value(sig, key, key + 1),
                          let v = value(sig, key + 1, valueEnd),
                          offset <= arrayEnd else { return nil }
                    entries.append(.init(k, v))
                }
                return .dictionary(keySignature: Self.text(sig, key, key + 1),
                                   valueSignature: Self.text(sig, key + 1, valueEnd), entries)
            default:
                var elements = [DBusValue]()
                while offset < arrayEnd {
                    guard let v = value(sig, element, typeEnd), offset <= arrayEnd else { return nil }
                    elements.append(v)
                }
                return .array(elementSignature: Self.text(sig, element, typeEnd), elements)
            }
        default:
            return nil   // h, or not a type code
        }
    }
}
