import DBusKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The signals and the reply the cache folds, read from their wire form (``WireBody``): each
// `a{sv}` packed straight into the cache's record (``PackedProperties/init(wireDictionary:)``)
// with no ``DBusValue`` made on the way (BENCHMARKS.md has its worth). Each reader returns nil when the bytes are
// not what it reads (another signature, or a value that cannot be packed); the cache then
// reads the decoded body, which gives the same result (ObjectCacheWireTests).

extension ObjectCache {
    /// What a wire reader made of a message it can read.
    enum WireRead<Value> {
        /// The values read.
        case read(Value)
        /// Nothing the cache keeps (its properties were not read).
        case notWanted
    }

    /// InterfacesAdded (`oa{sa{sv}}`): the object and the interfaces the cache keeps.
    static func interfacesAdded(wire: WireBody) -> (ObjectPath, [String: Properties])? {
        guard wire.signature == "oa{sa{sv}}" else { return nil }
        return wire.withCursor { cursor in
            guard let path = cursor.string(), let interfaces = interfaces(&cursor), cursor.offset == cursor.end else { return nil }
            return (ObjectPath(path), interfaces)
        }
    }

    /// PropertiesChanged (`sa{sv}as`): the interface, the changed properties and the
    /// invalidated names; ``WireRead/notWanted`` when `wanted` says no to the interface.
    static func propertiesChanged(wire: WireBody, wanted: (String) -> Bool) -> WireRead<(String, Properties, [String])>? {
        guard wire.signature == "sa{sv}as" else { return nil }
        return wire.withCursor { cursor in
            guard let (interface, _) = interfaceName(&cursor) else { return nil }
            guard wanted(interface) else { return .notWanted }
            guard let packed = PackedProperties(wireDictionary: &cursor),
                  let invalidated = cursor.stringArray(), cursor.offset == cursor.end else { return nil }
            return .read((interface, Properties(packed: packed), invalidated))
        }
    }

    /// A GetManagedObjects reply (`a{oa{sa{sv}}}`): each object with the interfaces the cache
    /// keeps.
    static func managedObjects(wire: WireBody) -> [(ObjectPath, [String: Properties])]? {
        guard wire.signature == "a{oa{sa{sv}}}" else { return nil }
        return wire.withCursor { cursor in
            guard let byteLength = cursor.uint32().map(Int.init), cursor.align(8) else { return nil }
            let arrayEnd = cursor.offset + byteLength
            guard arrayEnd <= cursor.end else { return nil }
            var objects = [(ObjectPath, [String: Properties])]()
            while cursor.offset < arrayEnd {
                guard cursor.align(8), let path = cursor.string(), let interfaces = interfaces(&cursor) else { return nil }
                objects.append((ObjectPath(path), interfaces))
            }
            return cursor.offset == arrayEnd && arrayEnd == cursor.end ? objects : nil
        }
    }

    /// The interfaces the cache keeps, each name's UTF-8 beside it.
    private static let cachedInterfaceNames: [(name: String, utf8: [UInt8])] = BlueZ.cachedInterfaces.sorted().map { ($0, Array($0.utf8)) }

    /// An interface name (`s`) at `cursor`, and whether the cache keeps that interface: one it
    /// keeps is its constant (no String made, and compared against the constants on
    /// identity), any other is read.
    private static func interfaceName(_ cursor: inout WireCursor) -> (name: String, cached: Bool)? {
        guard let bytes = cursor.stringBytes() else { return nil }
        for known in cachedInterfaceNames where known.utf8.count == bytes.count {
            if known.utf8.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }) { return (known.name, true) }
        }
        return (String(decoding: bytes, as: UTF8.self), false)
    }

    /// An `a{sa{sv}}` at `cursor` (at the array's length): the interfaces the cache keeps, with
    /// their properties (others are stepped over unread).
    private static func interfaces(_ cursor: inout WireCursor) -> [String: Properties]? {
        guard let byteLength = cursor.uint32().map(Int.init), cursor.align(8) else { return nil }
        let arrayEnd = cursor.offset + byteLength
        guard arrayEnd <= cursor.end else { return nil }
        var interfaces = [String: Properties]()
        while cursor.offset < arrayEnd {
            guard cursor.align(8), let (name, cached) = interfaceName(&cursor) else { return nil }
            if cached {
                guard let packed = PackedProperties(wireDictionary: &cursor) else { return nil }
                interfaces[name, default: Properties()].fold(Properties(packed: packed), invalidated: [])
            } else {
                guard cursor.skipArray() else { return nil }
            }
        }
        return cursor.offset == arrayEnd ? interfaces : nil
    }
}
