import Synchronization
internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Decodes a received message's body straight from its wire form (the D-Bus specification,
/// "Message Format" and "Marshaling (Wire Format)"), instead of walking it with libdbus's
/// iterator, which is made for any message and is slow for the many small values of BlueZ's
/// property dictionaries (BENCHMARKS.md, "Mechanisms kept for speed").
///
/// It takes only what it is sure of: a little-endian message (what every Linux machine
/// blectl runs on sends) that carries no Unix file descriptor, whose values fit their
/// signature to the byte. For anything else ``MessageDecoder`` uses the iterator, so the
/// result is the same either way (DBusKitTests/WireDecoderTests checks both on the same
/// messages); a body kept in wire form (``WireBody``) that the decoder then does not take
/// (a descriptor type inside a variant, which libdbus accepts with no descriptor attached)
/// is read by the iterator from the same bytes. libdbus has already validated every
/// received message (signature, UTF-8, lengths, padding); the bounds are checked again here
/// all the same.
enum WireDecoder {
    /// The values of `raw`'s body, or nil when this decoder does not take the message.
    static func body(of raw: OpaquePointer) -> [DBusValue]? {
        guard let signature = takenSignature(of: raw) else { return nil }
        if signature.pointee == 0 { return [] }
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &buffer, &length) != 0, let buffer else { return nil }
        defer { dbus_free(buffer) }
        let bytes = UnsafeRawBufferPointer(start: buffer, count: Int(length))
        guard let bounds = bodyBounds(bytes) else { return nil }
        return values(bytes, signature: UnsafeRawBufferPointer(start: signature, count: strlen(signature)), bounds)
    }

    /// `raw`'s body kept in its wire form (decoded when first read), or nil when this decoder
    /// does not take the message or its body is empty.
    static func wireBody(of raw: OpaquePointer) -> WireBody? {
        guard let signature = takenSignature(of: raw), signature.pointee != 0 else { return nil }
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &buffer, &length) != 0, let buffer else { return nil }
        guard let bounds = bodyBounds(UnsafeRawBufferPointer(start: buffer, count: Int(length))) else {
            dbus_free(buffer)
            return nil
        }
        // The marshalled copy libdbus made is the one kept (freed with the body).
        return WireBody(marshalled: UnsafeRawBufferPointer(start: buffer, count: Int(length)),
                        bodyStart: bounds.lowerBound, bodyEnd: bounds.upperBound, signature: String(cString: signature))
    }

    /// The message's signature when this decoder takes it: no Unix file descriptor, in the
    /// signature or attached (one inside a variant shows only there); descriptors live beside
    /// the bytes.
    private static func takenSignature(of raw: OpaquePointer) -> UnsafePointer<CChar>? {
        guard let signature = dbus_message_get_signature(raw), dbus_message_contains_unix_fds(raw) == 0 else { return nil }
        return strchr(signature, Int32(UInt8(ascii: "h"))) == nil ? signature : nil
    }

    /// Where the body lies in a marshalled little-endian message; nil for anything else.
    static func bodyBounds(_ bytes: UnsafeRawBufferPointer) -> Range<Int>? {
        // Fixed header: endianness, type, flags, version, body length, serial, then the
        // header fields array (its length at 12), padded to 8; the body follows.
        guard bytes.count >= 16, bytes[0] == UInt8(ascii: "l") else { return nil }
        let bodyLength = Int(bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian)
        let fieldsLength = Int(bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self).littleEndian)
        let bodyStart = (16 + fieldsLength + 7) & ~7
        guard bodyStart + bodyLength <= bytes.count else { return nil }
        return bodyStart..<bodyStart + bodyLength
    }

    /// The values of the body at `bounds` of `bytes`, one per complete type of `sig`; nil when
    /// the bytes do not hold exactly those.
    static func values(_ bytes: UnsafeRawBufferPointer, signature sig: UnsafeRawBufferPointer, _ bounds: Range<Int>) -> [DBusValue]? {
        var parser = WireCursor(data: bytes, offset: bounds.lowerBound, end: bounds.upperBound)
        var values = [DBusValue]()
        values.reserveCapacity(sig.count)   // at most one value per type code
        var i = 0
        while i < sig.count {
            guard let typeEnd = WireCursor.completeTypeEnd(sig, from: i),
                  let value = parser.value(sig, i, typeEnd) else { return nil }
            values.append(value)
            i = typeEnd
        }
        return parser.offset == parser.end ? values : nil
    }
}

/// A received message's body in its wire form (the D-Bus specification, "Marshaling"): a copy
/// of the marshalled little-endian message, read where it lies by whoever knows what it
/// carries (BlueZKit packs BlueZ's properties straight from it), and decoded into
/// ``DBusValue``s only when ``values`` is first read.
package final class WireBody: Sendable {
    /// The whole marshalled message (libdbus's allocation, freed with this object): the
    /// specification's alignment counts from its first byte. Never written.
    private nonisolated(unsafe) let bytes: UnsafeRawBufferPointer
    /// Where the body lies in ``bytes``.
    package let bodyStart: Int
    package let bodyEnd: Int
    /// The body's signature (`oa{sa{sv}}`).
    package let signature: String
    /// ``values`` once read. Set at most once, lock-free: most bodies are read only from
    /// their wire form and never decoded. Two first readers at once both decode; the first
    /// to store wins, and both return its values.
    private let decoded = AtomicLazyReference<Decoded>()

    private final class Decoded: Sendable {
        let values: [DBusValue]
        init(_ values: [DBusValue]) { self.values = values }
    }

    /// Takes `marshalled`, which `dbus_message_marshal` allocated.
    init(marshalled: UnsafeRawBufferPointer, bodyStart: Int, bodyEnd: Int, signature: String) {
        bytes = marshalled
        self.bodyStart = bodyStart
        self.bodyEnd = bodyEnd
        self.signature = signature
    }

    deinit {
        dbus_free(UnsafeMutableRawPointer(mutating: bytes.baseAddress))
    }

    /// The body's values (decoded on first read; libdbus's iterator reads them should this
    /// decoder not take the bytes, which libdbus has validated).
    package var values: [DBusValue] {
        if let cached = decoded.load() { return cached.values }
        var signature = signature
        let values = signature.withUTF8 { sig in
            WireDecoder.values(bytes, signature: UnsafeRawBufferPointer(sig), bodyStart..<bodyEnd)
        } ?? MessageDecoder.iteratorBody(ofMarshalled: bytes)
        return decoded.storeIfNil(Decoded(values)).values
    }

    /// Calls `body` with a cursor at the body's first byte.
    package func withCursor<R>(_ body: (inout WireCursor) -> R) -> R {
        var cursor = WireCursor(data: bytes, offset: bodyStart, end: bodyEnd)
        return withExtendedLifetime(self) { body(&cursor) }
    }
}

/// Reads marshalled values; offsets count from the message's first byte, as the
/// specification's alignment does. Every read checks its bounds and returns nil (or false)
/// when the bytes do not hold what it reads.
package struct WireCursor {
    package let data: UnsafeRawBufferPointer
    package var offset: Int
    package let end: Int

    init(data: UnsafeRawBufferPointer, offset: Int, end: Int) {
        self.data = data
        self.offset = offset
        self.end = end
    }

    /// The index just past the single complete type that starts at `i` in `sig`; nil when
    /// there is none.
    package static func completeTypeEnd(_ sig: UnsafeRawBufferPointer, from i: Int) -> Int? {
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
    package static func alignment(of code: UInt8) -> Int {
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "g"), UInt8(ascii: "v"): 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): 2
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("), UInt8(ascii: "{"): 8
        default: 4   // b i u s o a h
        }
    }

    package mutating func align(_ n: Int) -> Bool {
        let aligned = (offset + n - 1) & ~(n - 1)
        guard aligned <= end else { return false }
        offset = aligned
        return true
    }

    package mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard align(size), offset + size <= end else { return nil }
        defer { offset += size }
        return T(littleEndian: data.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    /// `s` and `o`: a 32-bit length, the UTF-8, a NUL.
    package mutating func string() -> String? {
        guard let length = fixed(UInt32.self).map(Int.init), offset + length + 1 <= end else { return nil }
        defer { offset += length + 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: data[offset..<offset + length]), as: UTF8.self)
    }

    /// `u` (and `b`, and an array's length): concrete for other modules, where the generic
    /// ``fixed(_:)`` runs unspecialized.
    package mutating func uint32() -> UInt32? { fixed(UInt32.self) }

    /// `s` and `o`: the UTF-8 bytes (within `data`), without making a String.
    package mutating func stringBytes() -> UnsafeRawBufferPointer? {
        guard let length = fixed(UInt32.self).map(Int.init), offset + length + 1 <= end else { return nil }
        defer { offset += length + 1 }
        return UnsafeRawBufferPointer(rebasing: data[offset..<offset + length])
    }

    /// Steps over an array whose elements are 8-aligned (structures, dictionary entries):
    /// its length, its padding, its bytes.
    package mutating func skipArray() -> Bool {
        guard let length = fixed(UInt32.self).map(Int.init), align(8), offset + length <= end else { return false }
        offset += length
        return true
    }

    /// `as`: the strings; nil when the bytes do not hold them.
    package mutating func stringArray() -> [String]? {
        guard let length = fixed(UInt32.self).map(Int.init), offset + length <= end else { return nil }
        let arrayEnd = offset + length
        var strings = [String]()
        while offset < arrayEnd {
            guard let s = string(), offset <= arrayEnd else { return nil }
            strings.append(s)
        }
        return strings
    }

    /// `g`: an 8-bit length, the signature, a NUL; as the bytes (within `data`).
    package mutating func signature() -> UnsafeRawBufferPointer? {
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
    package mutating func value(_ sig: UnsafeRawBufferPointer, _ start: Int, _ typeEnd: Int) -> DBusValue? {
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
