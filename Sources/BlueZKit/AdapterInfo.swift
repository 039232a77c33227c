import DBusKit

/// What BlueZ says about a local adapter: the properties of its org.bluez.Adapter1 object
/// (bluez/doc/org.bluez.Adapter.rst, as of BlueZ 5.66), as last signalled.
///
/// Every optional property is nil when BlueZ has no value for it (see
/// ``AdapterProperties``). Decoding never fails on a value.
@dynamicMemberLookup
public struct AdapterInfo: Sendable, Equatable {
    /// `/org/bluez/hci0`
    public var path: ObjectPath
    /// Every Adapter1 property BlueZKit reads (``AdapterProperties``), each also a member of
    /// this record (`info.powered`, `info.alias`), except UUIDs, shown below.
    public var properties: AdapterProperties

    /// `hci0`
    public var name: String { String(path.lastComponent) }
    /// Adapter1.UUIDs: the local services; malformed entries skipped; empty when absent.
    public var uuids: [BluetoothUUID] {
        get { properties.uuids ?? [] }
        set { properties.uuids = newValue }
    }

    /// An Adapter1 property of the record: `info.powered` is `info.properties.powered`.
    @inlinable public subscript<Value>(dynamicMember field: WritableKeyPath<AdapterProperties, Value>) -> Value {
        get { properties[keyPath: field] }
        set { properties[keyPath: field] = newValue }
    }

    /// Reads the record from an object's Adapter1 properties.
    public init(path: ObjectPath, properties p: ObjectCache.Properties) {
        self.path = path
        properties = AdapterProperties(p)
    }
}

extension Adapter {
    /// This adapter's Adapter1 properties; nil when BlueZ no longer has it. No bus traffic:
    /// read from the session's cache.
    public var info: AdapterInfo? {
        let path = path
        return session.withCache { cache in cache[path, BlueZ.adapterInterface].map { AdapterInfo(path: path, properties: $0) } }
    }
}
