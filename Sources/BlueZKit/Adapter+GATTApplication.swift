import DBusKit

/// A GATT application registered with bluetoothd, for the body of
/// ``Adapter/withGATTApplication(_:path:timeout:isolation:_:)``.
public final class GATTApplicationHandle: Sendable {
    public let adapter: Adapter
    /// The application's root object (org.freedesktop.DBus.ObjectManager); its services are
    /// `PATH/serviceN`, their characteristics `…/charM`, their descriptors `…/descK`.
    public let path: ObjectPath
    public let application: GATTApplication
    /// The events, in bus order, from registration on; one consumer. The stream ends when
    /// the body returns, or throws ``BLEError/unavailable(_:during:dbusError:)`` (stage
    /// ``BLEOperation/Kind/serve``) when bluetoothd leaves the bus (`.bluezLeft`), the bus
    /// is lost (`.busLost`) or the adapter is removed (`.adapterRemoved`).
    public let events: AsyncThrowingStream<GATTServerEvent, any Error>
    let objects: GATTApplicationObjects
    private let connection: BusConnection

    init(adapter: Adapter, application: GATTApplication, objects: GATTApplicationObjects,
         events: AsyncThrowingStream<GATTServerEvent, any Error>) {
        self.adapter = adapter
        self.path = objects.root
        self.application = application
        self.objects = objects
        self.events = events
        self.connection = adapter.session.connection
    }

    /// Every characteristic and descriptor, in the application's order (each characteristic
    /// before its descriptors).
    public var attributes: [GATTAttribute] { objects.paths.compactMap { objects.nodes[$0]?.attribute } }

    /// The characteristics with `uuid`, in `service` when given, in order.
    public func characteristics(_ uuid: BluetoothUUID, in service: BluetoothUUID? = nil) -> [GATTAttribute] {
        attributes.filter { $0.descriptor == nil && $0.characteristic == uuid && (service == nil || $0.service == service) }
    }

    /// The attribute's current value (what a read from offset 0 answers).
    public func value(of attribute: GATTAttribute) -> [UInt8] { objects.value(at: attribute.path) ?? [] }

    /// Replaces the attribute's value and tells bluetoothd (a PropertiesChanged of `Value`),
    /// which sends it to every central subscribed to the characteristic: a notification, or
    /// an indication for one that indicates (its confirmation comes as
    /// ``GATTServerEvent/confirmed(_:)``); bluetoothd cuts it to the link's ATT MTU - 3.
    /// - Throws: ``GATTApplication/Invalid`` for an attribute not of this application or a
    ///   value over 512 bytes (nothing changes); `BusError` when the bus is gone.
    public func setValue(_ value: [UInt8], of attribute: GATTAttribute) async throws {
        guard objects.nodes[attribute.path]?.attribute == attribute else {
            throw GATTApplication.Invalid(attribute: "\(attribute)", reason: "not an attribute of the application at \(path)")
        }
        guard value.count <= GATTApplication.maximumValueLength else {
            throw GATTApplication.Invalid(attribute: "\(attribute)",
                                          reason: "\(value.count) bytes: a value holds at most \(GATTApplication.maximumValueLength)")
        }
        try await connection.emit([objects.setValue(value, at: attribute.path)])
    }

    /// How many calls to the application's objects were refused (`AccessDenied`: not from
    /// org.bluez's owner).
    public var refusedCalls: Int { objects.refusedCalls }
}

extension Adapter {
    /// How long clean-up waits for UnregisterApplication's reply after a body that ended
    /// normally; after a failure or an interruption, ``CleanupPolicy/interruptedTimeout``.
    public static let applicationUnregisterTimeout: Duration = .seconds(2)

    /// Serves `application` for the duration of `body`: checks it
    /// (``GATTApplication/validate()``), exports its objects (answering bluetoothd only,
    /// `AccessDenied` to anyone else: ``GATTApplicationHandle``), registers it
    /// (GattManager1.RegisterApplication, no options; bluetoothd reads the objects back
    /// before it answers), runs `body`, then unregisters it (UnregisterApplication, unless
    /// bluetoothd left) and stops exporting: also when `body` throws or the task is
    /// cancelled. bluetoothd also drops the application of a client that leaves the bus.
    /// Follows bluez/doc/org.bluez.GattManager.rst and bluetoothd 5.66's src/gatt-database.c.
    /// - Parameters:
    ///   - path: the application's root; nil (the default): `/org/blectl/applicationN`, N
    ///     counting from 1 in this process.
    ///   - timeout: the limit for RegisterApplication.
    /// - Returns: what `body` returns.
    /// - Throws: ``GATTApplication/Invalid`` before anything is sent;
    ///   ``BLEError/notSupported(_:_:)`` (no GattManager1 on the adapter);
    ///   ``BLEError/failed(_:dbusError:message:)`` (bluetoothd's refusals: `Failed` "No
    ///   object received", "No valid service object found", "Failed to create entry in
    ///   database"; `AlreadyExists`; `InvalidArguments`); ``BLEError/timedOut(_:)``,
    ///   ``BLEError/unavailable(_:during:dbusError:)``, ``BLEError/permissionDenied(_:during:)``,
    ///   all with stage ``BLEOperation/Kind/serve``; `CancellationError`; what `body` throws.
    ///   Clean-up failures are not thrown.
    public func withGATTApplication<T: Sendable>(
        _ application: GATTApplication, path: ObjectPath? = nil, timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (GATTApplicationHandle) async throws -> T
    ) async throws -> T {
        try application.validate()
        let operation = BLEOperation(.serve)
        let (events, continuation) = AsyncThrowingStream.makeStream(of: GATTServerEvent.self)
        let objects = GATTApplicationObjects(root: path ?? Self.nextApplicationPath(), application: application) {
            continuation.yield($0)
        }
        let tokens = ([objects.root] + objects.paths).map { objectPath in
            session.connection.export(objectPath) { [weak session] call in objects.answer(call, bluezOwner: session?.bluezOwner) }
        }
        let watcher = session.addWatcher(linkWatcher(operation: operation) { address, up in
            continuation.yield(up ? .connected(address) : .disconnected(address))
        } ended: { error in
            continuation.finish(throwing: error)
        })
        let stopExporting = { [session] in
            session.removeWatcher(watcher)
            tokens.forEach(session.connection.unexport)
            continuation.finish()
        }
        return try await withRegistration(
            register: managerCall("RegisterApplication", root: objects.root), unregister: unregisterCall(objects.root),
            operation: operation, timeout: timeout, unregisterTimeout: Self.applicationUnregisterTimeout,
            registrationError: { Self.registrationError($0, adapter: name, operation: operation) }, stopExporting: stopExporting
        ) {
            try await body(GATTApplicationHandle(adapter: self, application: application, objects: objects, events: events))
        }
    }

    /// GattManager1's `member` for the application at `root`.
    private func managerCall(_ member: String, root: ObjectPath) -> MethodCall {
        BlueZ.call(path, BlueZ.gattManagerInterface, member, member == "RegisterApplication"
            ? [.objectPath(root), .dictionary(keySignature: "s", valueSignature: "v", [])] : [.objectPath(root)])
    }

    private func unregisterCall(_ root: ObjectPath) -> MethodCall { managerCall("UnregisterApplication", root: root) }

    /// An adapter without GattManager1 cannot serve.
    private static func registrationError(_ error: any Error, adapter: String, operation: BLEOperation) -> any Error {
        guard case BLEError.failed(_, let name, _) = error,
              [DBusErrorName.unknownInterface, DBusErrorName.unknownMethod, DBusErrorName.unknownObject].contains(name) else { return error }
        return BLEError.notSupported(operation, "adapter \(adapter) cannot serve GATT (no \(BlueZ.gattManagerInterface))")
    }

    private static let applicationCount = Lock(0)

    /// `/org/blectl/application1`, `…2`, ...: a root of its own for each application.
    static func nextApplicationPath() -> ObjectPath {
        let n = applicationCount.withLock { count in
            count += 1
            return count
        }
        return ObjectPath("/org/blectl/application\(n)")
    }
}
