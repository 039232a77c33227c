import DBusKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Properties packed straight from a received message's wire form, rather than decoded into
// `DBusValue`s and a dictionary, packed, and the values freed again (BENCHMARKS.md, "Mechanisms
// kept for speed"). The record is the one
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
        var seenOthers = Set<String>()   // a Set: an a{sv} may hold tens of thousands of names
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
                // Compared as Strings, as the decoded path's dictionary compares them (canonical
                // equivalence: "é" precomposed and decomposed are one name).
                guard seenOthers.insert(String(decoding: key, as: UTF8.self)).inserted else { return nil }
            }
            guard writer.transcode(&cursor, signature, 0, signature.count), cursor.offset <= arrayEnd else { return nil }
        }
        guard cursor.offset == arrayEnd else { return nil }
        // The record is kept (for as long as the device is), so without the room reserved for
        // the wire form's size: a record is some half of that (a scan's 20,000 devices would
        // each keep 400 bytes more).
        self.init(bytes: writer.bytes.capacity - writer.bytes.count > 32
                  ? writer.bytes.withUnsafeBufferPointer { Array($0) } : writer.bytes)
    }
}

extension PackedWriter {
    /// Each known name's length, first and last byte in one word (no two names share one:
    /// ObjectCacheWireTests finds every name by its bytes), so a key read from the wire is
    /// looked up without making a String of it.
    private static let knownWords: [UInt32] = PackedProperties.knownNames.map { word(Array($0.utf8)) }
    private static let knownUTF8: [[UInt8]] = PackedProperties.knownNames.map { Array($0.utf8) }

    private static func word(_ utf8: some Collection<UInt8>) -> UInt32 {
        guard let first = utf8.first else { return 0 }
        var last = first
        for byte in utf8 { last = byte }
        return UInt32(truncatingIfNeeded: utf8.count) << 16 | UInt32(first) << 8 | UInt32(last)
    }

    /// The index in ``PackedProperties/knownNames`` of the name whose UTF-8 is `utf8`.
    static func knownIndex(utf8: UnsafeRawBufferPointer) -> UInt8? {
        guard !utf8.isEmpty, utf8.count < 0x100 else { return nil }
        let word = UInt32(utf8.count) << 16 | UInt32(utf8[0]) << 8 | UInt32(utf8[utf8.count - 1])
        guard let index = knownWords.firstIndex(of: word) else { return nil }
        let same = knownUTF8[index].withUnsafeBytes { memcmp($0.baseAddress!, utf8.baseAddress!, utf8.count) == 0 }
        return same ? UInt8(index) : nil
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
        case UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"), UInt8(ascii: "u"),
             UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"):
            // Little-endian on the wire and in the record: the bytes as they are.
            let size = WireCursor.alignment(of: code)
            guard cursor.align(size), cursor.offset + size <= cursor.end else { return false }
            bytes.append(code)
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: cursor.data[cursor.offset..<cursor.offset + size]))
            cursor.offset += size
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
