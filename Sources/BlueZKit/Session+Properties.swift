import DBusKit

extension Session {
    /// Reads one property from bluetoothd (org.freedesktop.DBus.Properties.Get), not from the
    /// cache: for properties BlueZ does not signal, or to check the cache.
    /// - Parameters:
    ///   - name: the property (`Powered`, `RSSI`, `MTU`, ...).
    ///   - interface: its interface (``BlueZ/adapterInterface``, ...).
    ///   - path: the object.
    ///   - timeout: the limit for the reply.
    /// - Returns: the value, unwrapped from its variant.
    /// - Throws: ``BLEError/failed(_:dbusError:message:)`` (an unknown object, interface or
    ///   property: BlueZ's or the D-Bus error name kept), ``BLEError/timedOut(_:)``,
    ///   ``BLEError/unavailable(_:)``, `CancellationError`.
    public func property(_ name: String, of path: ObjectPath, on interface: String,
                         operation: BLEOperation = BLEOperation(.adapter), timeout: Duration) async throws -> DBusValue {
        let call = BlueZ.call(path, BlueZ.properties, "Get", [.string(interface), .string(name)])
        let reply = try await self.call(call, operation: operation, timeout: timeout)
        guard let value = reply.body.first else {
            throw BLEError.protocolError(operation, "Properties.Get of \(interface).\(name) returned nothing")
        }
        return value.unwrapped
    }

    /// Sets one property (org.freedesktop.DBus.Properties.Set), for example Adapter1's
    /// `Powered`, `Discoverable` or `Alias`, or Device1's `Trusted`. BlueZ signals the
    /// change (PropertiesChanged), which reaches the cache in order.
    /// - Parameter value: the value with its D-Bus type (`.boolean(true)`); sent in a variant.
    /// - Throws: ``BLEError/failed(_:dbusError:message:)`` (read-only or unknown property,
    ///   invalid value), ``BLEError/permissionDenied(_:)``, ``BLEError/timedOut(_:)``,
    ///   ``BLEError/unavailable(_:)``, `CancellationError`.
    public func setProperty(_ name: String, of path: ObjectPath, on interface: String, to value: DBusValue,
                            operation: BLEOperation = BLEOperation(.adapter), timeout: Duration) async throws {
        let call = BlueZ.call(path, BlueZ.properties, "Set", [.string(interface), .string(name), .variant(value)])
        _ = try await self.call(call, operation: operation, timeout: timeout)
    }
}
