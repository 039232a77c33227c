import DBusKit

/// What happens to an advertisement while it is registered (``AdvertisingHandle/events``).
public enum AdvertisingEvent: Sendable, Equatable {
    /// bluetoothd called LEAdvertisement1.Release: it dropped the advertisement itself (its
    /// `Timeout`, the adapter going away, bluetoothd stopping, another tool) and nothing is
    /// advertised any more. The stream ends after it.
    case released
    /// A device's link to the adapter came up (Device1.Connected true, or a device object
    /// added connected): a central that connected to the advertisement. BlueZ 5.66 does not
    /// say which side opened a link, so one this host opened meanwhile shows too.
    case connected(BluetoothAddress)
    /// That link went down (Connected false, or the device object removed).
    case disconnected(BluetoothAddress)
}

/// An advertisement registered with bluetoothd, for the body of
/// ``Adapter/withAdvertisement(_:path:timeout:isolation:_:)``.
public final class AdvertisingHandle: Sendable {
    public let adapter: Adapter
    /// Where the org.bluez.LEAdvertisement1 object is exported.
    public let path: ObjectPath
    public let advertisement: LEAdvertisement
    /// The packets as bluetoothd 5.66 lays them out (sizes per field).
    public let payload: LEAdvertisement.LegacyPayload
    /// The events, in bus order, from registration on; one consumer. The stream ends after
    /// ``AdvertisingEvent/released``, when the body returns, or throws
    /// ``BLEError/unavailable(_:during:dbusError:)`` (stage ``BLEOperation/Kind/advertise``)
    /// when bluetoothd leaves the bus (`.bluezLeft`), the bus is lost (`.busLost`) or the
    /// adapter is removed (`.adapterRemoved`).
    public let events: AsyncThrowingStream<AdvertisingEvent, any Error>
    let object: AdvertisementObject

    init(adapter: Adapter, object: AdvertisementObject, payload: LEAdvertisement.LegacyPayload,
         events: AsyncThrowingStream<AdvertisingEvent, any Error>) {
        self.adapter = adapter
        self.path = object.path
        self.advertisement = object.advertisement
        self.object = object
        self.payload = payload
        self.events = events
    }

    /// Whether bluetoothd called Release (then the advertisement is not registered any more).
    public var isReleased: Bool { object.isReleased }

    /// How many calls to the object were refused (`AccessDenied`: not from org.bluez's owner).
    public var refusedCalls: Int { object.requests.filter { !$0.accepted }.count }
}

extension Adapter {
    /// How long clean-up waits for UnregisterAdvertisement's reply after a body that ended
    /// normally (bluetoothd answers at once); after a failure or an interruption,
    /// ``CleanupPolicy/interruptedTimeout``.
    public static let advertisementUnregisterTimeout: Duration = .seconds(2)

    /// Advertises `advertisement` for the duration of `body`: checks that it fits
    /// (``LEAdvertisement/legacyPayload(adapterDiscoverable:adapterName:)``, with the
    /// adapter's Discoverable and Alias as cached) and that the adapter has a free
    /// advertising instance (LEAdvertisingManager1.SupportedInstances, read from bluetoothd),
    /// exports an org.bluez.LEAdvertisement1 object (``AdvertisingHandle/path``: answering
    /// bluetoothd only, `AccessDenied` to anyone else), registers it
    /// (LEAdvertisingManager1.RegisterAdvertisement, no options), runs `body`, then
    /// unregisters it (UnregisterAdvertisement, unless bluetoothd released it or left) and
    /// stops exporting it: also when `body` throws or the task is cancelled (the call is sent
    /// anyway). bluetoothd also drops the advertisement of a client that leaves the bus.
    /// Follows bluez/doc/org.bluez.LEAdvertisingManager.rst (5.66: advertising-api.txt) and
    /// bluetoothd 5.66's src/advertising.c.
    /// - Parameters:
    ///   - path: where to export the object; nil (the default): `/org/blectl/advertisementN`,
    ///     N counting from 1 in this process.
    ///   - timeout: the limit for each call before `body` (Get of SupportedInstances,
    ///     RegisterAdvertisement, which bluetoothd answers once it has read the object back).
    /// - Returns: what `body` returns.
    /// - Throws: ``BLEError/advertisementRejected(_:)`` before anything is sent (it does not
    ///   fit, a value bluetoothd refuses, no free instance: nothing registered);
    ///   ``BLEError/notSupported(_:_:)`` (no LEAdvertisingManager1 on the adapter);
    ///   ``BLEError/busy(_:dbusError:message:)`` (`org.bluez.Error.NotPermitted` "Maximum
    ///   advertisements reached"); ``BLEError/failed(_:dbusError:message:)``
    ///   (`org.bluez.Error.Failed` "Failed to parse advertisement." or "Failed to register
    ///   advertisement", `InvalidArguments`, `InvalidLength`, `AlreadyExists`);
    ///   ``BLEError/timedOut(_:)``, ``BLEError/unavailable(_:during:dbusError:)``,
    ///   ``BLEError/permissionDenied(_:during:)``, all with stage
    ///   ``BLEOperation/Kind/advertise``; `CancellationError`; what `body` throws. Clean-up
    ///   failures are not thrown.
    public func withAdvertisement<T: Sendable>(
        _ advertisement: LEAdvertisement, path: ObjectPath? = nil, timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AdvertisingHandle) async throws -> T
    ) async throws -> T {
        let operation = BLEOperation(.advertise)
        let adapterPath = self.path
        let (discoverable, alias) = session.withCache { cache in
            (cache.property("Discoverable", of: adapterPath, on: BlueZ.adapterInterface)?.bool ?? false,
             cache.property("Alias", of: adapterPath, on: BlueZ.adapterInterface)?.string)
        }
        let payload = try advertisement.legacyPayload(adapterDiscoverable: discoverable, adapterName: alias)
        try await checkFreeInstance(operation: operation, timeout: timeout)

        let (events, continuation) = AsyncThrowingStream.makeStream(of: AdvertisingEvent.self)
        let object = AdvertisementObject(path: path ?? Self.nextAdvertisementPath(), advertisement: advertisement) {
            continuation.yield(.released)
            continuation.finish()
        }
        let token = session.connection.export(object.path) { [weak session] call in
            object.answer(call, bluezOwner: session?.bluezOwner)
        }
        // Subscribed before registering: a central may connect as soon as bluetoothd answers.
        let watcher = session.addWatcher(linkWatcher(operation: operation) { address, up in
            continuation.yield(up ? .connected(address) : .disconnected(address))
        } ended: { error in
            continuation.finish(throwing: error)
        })
        let stopExporting = { [session] in
            session.removeWatcher(watcher)
            session.connection.unexport(token)
            continuation.finish()
        }
        let register = BlueZ.call(adapterPath, BlueZ.advertisingManagerInterface, "RegisterAdvertisement",
                                  [.objectPath(object.path), .dictionary(keySignature: "s", valueSignature: "v", [])])
        return try await withRegistration(
            register: register, unregister: unregisterCall(object.path), operation: operation, timeout: timeout,
            unregisterTimeout: Self.advertisementUnregisterTimeout, registrationError: Self.registrationError,
            isStillRegistered: { !object.isReleased }, stopExporting: stopExporting
        ) {
            try await body(AdvertisingHandle(adapter: self, object: object, payload: payload, events: events))
        }
    }

    /// Fails unless bluetoothd has a free advertising instance on this adapter.
    private func checkFreeInstance(operation: BLEOperation, timeout: Duration) async throws {
        let instances: DBusValue
        do {
            instances = try await session.property("SupportedInstances", of: path, on: BlueZ.advertisingManagerInterface,
                                                   operation: operation, timeout: timeout)
        } catch BLEError.failed(_, let name, _) where name == DBusErrorName.invalidArgs || name == DBusErrorName.unknownInterface
            || name == DBusErrorName.unknownMethod || name == DBusErrorName.unknownObject {
            throw BLEError.notSupported(operation, "adapter \(self.name) cannot advertise (no \(BlueZ.advertisingManagerInterface))")
        }
        guard let free = instances.integer else {
            throw BLEError.protocolError(operation, "SupportedInstances is not a number: \(instances)")
        }
        if free == 0 {
            throw BLEError.advertisementRejected(LEAdvertisement.Rejection(
                .noFreeInstance, property: "SupportedInstances",
                reason: "adapter \(name) has SupportedInstances 0: every advertising instance is taken"))
        }
    }

    /// NotPermitted, which RegisterAdvertisement answers when no instance is free, is a
    /// busy adapter rather than a want of pairing.
    private static func registrationError(_ error: any Error) -> any Error {
        guard case BLEError.notPermitted(let operation, let name, let message) = error else { return error }
        return BLEError.busy(operation, dbusError: name, message: message)
    }

    private func unregisterCall(_ path: ObjectPath) -> MethodCall {
        BlueZ.call(self.path, BlueZ.advertisingManagerInterface, "UnregisterAdvertisement", [.objectPath(path)])
    }

    private static let advertisementCount = Lock(0)

    /// `/org/blectl/advertisement1`, `…2`, ...: a path of its own for each advertisement.
    static func nextAdvertisementPath() -> ObjectPath {
        let n = advertisementCount.withLock { count in
            count += 1
            return count
        }
        return ObjectPath("/org/blectl/advertisement\(n)")
    }
}
