import DBusKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Properties packed straight from a received signal's wire form (issue 12: decoding an
// InterfacesAdded into `DBusValue`s, a dictionary, then packing it, and freeing the values
// again, cost about half of blectl's own work per discovered device). The record is the one
// ``PackedWriter`` makes from the same values decoded: ObjectCacheWireTests checks both ways
// give the same cache and the same events.

extension PackedProperties {
    /// The properties of the `a{sv}` at `cursor` (placed at the array's length), packed as
    /// ``DBusValue/stringKeyedDictionary`` gives them (variants unwrapped); nil when the bytes
    /// do not hold one, a value cannot be packed (a Unix file descriptor) or a name comes twice:
    /// the caller then reads the decoded body. The cursor ends just past the array.
    init?(wireDictionary cursor: inout WireCursor) {
        guard let byteLength = cursor.uint32().map(Int.init), cursor.align(8) else { return nil }
        let arrayEnd = cursor.offset + byteLength
        guard arrayEnd <= cursor.end else { return nil }
        var writer = PackedWriter()
        writer.bytes.reserveCapacity(byteLength)
        var seenKnown: UInt64 = 0   // a bit per known name (fewer than 64)
        var seenOthers = [UnsafeRawBufferPointer]()
        while cursor.offset < arrayEnd {
            guard cursor.align(8), let key = cursor.stringBytes(), var signature = cursor.signature() else { return nil }
            // The value as `stringKeyedDictionary` keeps it: every variant around it unwrapped.
            while signature.count == 1, signature[0] == UInt8(ascii: "v") {
                guard let inner = cursor.signature() else { return nil }
                signature = inner
            }
            guard !signature.isEmpty, WireCursor.completeTypeEnd(signature, from: 0) == signature.count else { return nil }
            // A name sent twice: the decoded path keeps the last value; leave it that path.
            if let index = writer.writeKey(utf8: key) {
                guard seenKnown & (1 << index) == 0 else { return nil }
                seenKnown |= 1 << index
            } else {
                guard !seenOthers.contains(where: { $0.elementsEqual(key) }) else { return nil }
                seenOthers.append(key)
            }
            guard writer.transcode(&cursor, signature, 0, signature.count), cursor.offset <= arrayEnd else { return nil }
        }
        guard cursor.offset == arrayEnd else { return nil }
        self.init(bytes: writer.bytes)
    }
}

extension PackedWriter {
    /// The known names' UTF-8, one after another, and where each starts (`offsets[i]` to
    /// `offsets[i + 1]`): a key read from the wire is looked up without making a String.
    private static let knownUTF8: (bytes: [UInt8], offsets: [Int]) = {
        var bytes = [UInt8]()
        var offsets = [0]
        for name in PackedProperties.knownNames {
            bytes.append(contentsOf: name.utf8)
            offsets.append(bytes.count)
        }
        return (bytes, offsets)
    }()

    /// The index in ``PackedProperties/knownNames`` of the name whose UTF-8 is `utf8`.
    static func knownIndex(utf8: UnsafeRawBufferPointer) -> UInt8? {
        let table = knownUTF8
        return table.bytes.withUnsafeBytes { names -> UInt8? in
            for i in 0..<table.offsets.count - 1 {
                let start = table.offsets[i]
                guard table.offsets[i + 1] - start == utf8.count else { continue }
                if utf8.isEmpty || memcmp(names.baseAddress! + start, utf8.baseAddress!, utf8.count) == 0 { return UInt8(i) }
            }
            return nil
        }
    }

    /// Appends the key whose UTF-8 is `utf8`; returns its index in ``PackedProperties/knownNames``
    /// when it is one of those.
    @discardableResult
    mutating func writeKey(utf8: UnsafeRawBufferPointer) -> UInt8? {
        if let index = Self.knownIndex(utf8: utf8) {
            bytes.append(index)
            return index
        }
        bytes.append(PackedProperties.other)
        writeBytes(utf8)
        return nil
    }

    /// Appends a length and `utf8`, as ``writeString(_:)`` does.
    private mutating func writeBytes(_ utf8: UnsafeRawBufferPointer) {
        writeLength(utf8.count)
        bytes.append(contentsOf: utf8)
    }

    /// Puts the length `value` at `position`, where ``countPlaceholder()`` left a byte for it
    /// (a container's count, known once its elements are written): one byte below 128, the
    /// usual case; more are made room for.
    private mutating func setLength(_ value: Int, at position: Int) {
        if value < 0x80 {
            bytes[position] = UInt8(value)
            return
        }
        var encoded = [UInt8]()
        var v = UInt(value)
        while v >= 0x80 {
            encoded.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        encoded.append(UInt8(v))
        bytes.replaceSubrange(position..<position + 1, with: encoded)
    }

    /// Leaves a byte for a count that ``setLength(_:at:)`` fills in; returns where.
    private mutating func countPlaceholder() -> Int {
        bytes.append(0)
        return bytes.count - 1
    }

    /// Appends the value of the complete type `sig[start..<typeEnd]` read at `cursor`, as
    /// ``writeValue(_:)`` appends it decoded; false when the bytes do not hold one or it holds
    /// a file descriptor.
    mutating func transcode(_ cursor: inout WireCursor, _ sig: UnsafeRawBufferPointer, _ start: Int, _ typeEnd: Int) -> Bool {
        let code = sig[start]
        switch code {
        case UInt8(ascii: "y"):
            guard cursor.offset < cursor.end else { return false }
            bytes.append(code)
            bytes.append(cursor.data[cursor.offset])
            cursor.offset += 1
        case UInt8(ascii: "b"):
            guard let v = cursor.uint32(), v <= 1 else { return false }
            bytes.append(code)
            bytes.append(UInt8(v))
        case UInt8(ascii: "n"), UInt8(ascii: "q"):
            guard let v = cursor.uint16() else { return false }
            bytes.append(code)
            writeFixed(v)
        case UInt8(ascii: "i"), UInt8(ascii: "u"):
            guard let v = cursor.uint32() else { return false }
            bytes.append(code)
            writeFixed(v)
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"):
            guard let v = cursor.uint64() else { return false }
            bytes.append(code)
            writeFixed(v)
        case UInt8(ascii: "s"), UInt8(ascii: "o"):
            guard let utf8 = cursor.stringBytes() else { return false }
            bytes.append(code)
            writeBytes(utf8)
        case UInt8(ascii: "g"):
            guard let utf8 = cursor.signature() else { return false }
            bytes.append(code)
            writeBytes(utf8)
        case UInt8(ascii: "v"):
            guard let inner = cursor.signature(), !inner.isEmpty,
                  WireCursor.completeTypeEnd(inner, from: 0) == inner.count else { return false }
            bytes.append(code)
            return transcode(&cursor, inner, 0, inner.count)
        case UInt8(ascii: "("):
            guard cursor.align(8) else { return false }
            bytes.append(UInt8(ascii: "r"))
            var fields = [(Int, Int)]()
            var i = start + 1
            while i < typeEnd - 1 {
                guard let fieldEnd = WireCursor.completeTypeEnd(sig, from: i), fieldEnd < typeEnd else { return false }
                fields.append((i, fieldEnd))
                i = fieldEnd
            }
            writeLength(fields.count)
            for (fieldStart, fieldEnd) in fields {
                guard transcode(&cursor, sig, fieldStart, fieldEnd) else { return false }
            }
        case UInt8(ascii: "a"):
            guard let byteLength = cursor.uint32().map(Int.init) else { return false }
            let element = start + 1
            // The padding to the element's alignment is there even when the array is empty.
            guard cursor.align(WireCursor.alignment(of: sig[element])) else { return false }
            let arrayEnd = cursor.offset + byteLength
            guard arrayEnd <= cursor.end else { return false }
            switch sig[element] {
            case UInt8(ascii: "y"):
                bytes.append(UInt8(ascii: "A"))
                writeBytes(UnsafeRawBufferPointer(rebasing: cursor.data[cursor.offset..<arrayEnd]))
                cursor.offset = arrayEnd
            case UInt8(ascii: "{"):
                // {KV}: one basic key type, one complete value type.
                let key = element + 1
                let valueEnd = typeEnd - 1
                guard key + 1 < valueEnd else { return false }
                bytes.append(UInt8(ascii: "e"))
                writeBytes(UnsafeRawBufferPointer(rebasing: sig[key..<key + 1]))
                writeBytes(UnsafeRawBufferPointer(rebasing: sig[key + 1..<valueEnd]))
                let countAt = countPlaceholder()
                var count = 0
                while cursor.offset < arrayEnd {
                    guard cursor.align(8),
                          transcode(&cursor, sig, key, key + 1),
                          transcode(&cursor, sig, key + 1, valueEnd),
                          cursor.offset <= arrayEnd else { return false }
                    count += 1
                }
                setLength(count, at: countAt)
            default:
                bytes.append(UInt8(ascii: "a"))
                writeBytes(UnsafeRawBufferPointer(rebasing: sig[element..<typeEnd]))
                let countAt = countPlaceholder()
                var count = 0
                while cursor.offset < arrayEnd {
                    guard transcode(&cursor, sig, element, typeEnd), cursor.offset <= arrayEnd else { return false }
                    count += 1
                }
                setLength(count, at: countAt)
            }
        default:
            return false   // h, or not a type code
        }
        return true
    }
}
