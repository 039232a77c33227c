import DBusKit

// The reading half of ``PackedProperties``'s layout (described there).

/// Reads what ``PackedWriter`` wrote (only ever its own output: no validation beyond bounds).
struct PackedReader {
    let buffer: UnsafeBufferPointer<UInt8>
    var offset = 0
    var entryStart = 0

    init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func byte() -> UInt8 {
        guard offset < buffer.count else { return 0 }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func readLength() -> Int {
        var value = 0
        var shift = 0
        while offset < buffer.count {
            let b = byte()
            value |= Int(b & 0x7F) << shift
            if b & 0x80 == 0 { break }
            shift += 7
        }
        return value
    }

    mutating func readString() -> String {
        let count = min(readLength(), buffer.count - offset)
        defer { offset += count }
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[offset..<offset + count]), as: UTF8.self)
    }

    mutating func skipString() {
        let count = readLength()
        offset = min(buffer.count, offset + count)
    }

    mutating func readFixed<T: FixedWidthInteger>(_: T.Type) -> T {
        let size = MemoryLayout<T>.size
        guard offset + size <= buffer.count else { offset = buffer.count; return 0 }
        var value = T.zero
        let start = offset
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[start..<start + size]))) }
        offset += size
        return T(littleEndian: value)
    }

    mutating func readKeyToken() -> PackedProperties.KeyToken {
        let index = byte()
        return index == PackedProperties.other ? .other(readString()) : .known(index)
    }

    mutating func readKey() -> String? {
        let index = byte()
        if index == PackedProperties.other { return readString() }
        return PackedProperties.key(index: index)
    }

    mutating func readValue() -> DBusValue? {
        guard offset < buffer.count else { return nil }
        switch byte() {
        case UInt8(ascii: "y"): return .byte(byte())
        case UInt8(ascii: "b"): return .boolean(byte() != 0)
        case UInt8(ascii: "n"): return .int16(readFixed(Int16.self))
        case UInt8(ascii: "q"): return .uint16(readFixed(UInt16.self))
        case UInt8(ascii: "i"): return .int32(readFixed(Int32.self))
        case UInt8(ascii: "u"): return .uint32(readFixed(UInt32.self))
        case UInt8(ascii: "x"): return .int64(readFixed(Int64.self))
        case UInt8(ascii: "t"): return .uint64(readFixed(UInt64.self))
        case UInt8(ascii: "d"): return .double(Double(bitPattern: readFixed(UInt64.self)))
        case UInt8(ascii: "s"): return .string(readString())
        case UInt8(ascii: "o"): return .objectPath(ObjectPath(readString()))
        case UInt8(ascii: "g"): return .signature(readString())
        case UInt8(ascii: "A"):
            let count = min(readLength(), buffer.count - offset)
            defer { offset += count }
            return .bytes(Array(buffer[offset..<offset + count]))
        case UInt8(ascii: "a"):
            let element = readString()
            let count = readLength()
            var values = [DBusValue]()
            values.reserveCapacity(min(count, buffer.count - offset))
            for _ in 0..<count {
                guard let v = readValue() else { return nil }
                values.append(v)
            }
            return .array(elementSignature: element, values)
        case UInt8(ascii: "e"):
            let keySignature = readString()
            let valueSignature = readString()
            let count = readLength()
            var entries = [DBusValue.DictEntry]()
            entries.reserveCapacity(min(count, buffer.count - offset))
            for _ in 0..<count {
                guard let k = readValue(), let v = readValue() else { return nil }
                entries.append(.init(k, v))
            }
            return .dictionary(keySignature: keySignature, valueSignature: valueSignature, entries)
        case UInt8(ascii: "r"):
            let count = readLength()
            var fields = [DBusValue]()
            for _ in 0..<count {
                guard let v = readValue() else { return nil }
                fields.append(v)
            }
            return .structure(fields)
        case UInt8(ascii: "v"):
            return readValue().map { .variant($0) }
        default:
            offset = buffer.count  // not ours: stop
            return nil
        }
    }

    mutating func skipValue() {
        guard offset < buffer.count else { return }
        switch byte() {
        case UInt8(ascii: "y"), UInt8(ascii: "b"): offset += 1
        case UInt8(ascii: "n"), UInt8(ascii: "q"): offset += 2
        case UInt8(ascii: "i"), UInt8(ascii: "u"): offset += 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): offset += 8
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"), UInt8(ascii: "A"): skipString()
        case UInt8(ascii: "a"):
            skipString()
            for _ in 0..<readLength() where offset < buffer.count { skipValue() }
        case UInt8(ascii: "e"):
            skipString()
            skipString()
            for _ in 0..<readLength() where offset < buffer.count { skipValue(); skipValue() }
        case UInt8(ascii: "r"):
            for _ in 0..<readLength() where offset < buffer.count { skipValue() }
        case UInt8(ascii: "v"):
            skipValue()
        default:
            offset = buffer.count
        }
        offset = min(offset, buffer.count)
    }
}
