import DBusKit

/// A device with its link up and services resolved, inside ``Device/withConnection(timeout:disconnectTimeout:_:)``.
/// Every operation here has its own timeout and fails at once with ``BLEError/disconnected(_:)``
/// when the link drops.
public struct ConnectedDevice: Sendable {
    public let device: Device
    public let origin: ConnectionOrigin
    var session: Session { device.session }
    /// How many GATT objects were under the device when its services were resolved.
    private let gattObjectsAtResolution: Int
    /// Set once a tree that grew after ServicesResolved has been seen quiet.
    private let treeSettled: Flag

    private final class Flag: Sendable {
        private let value = Lock(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    /// Call once services are resolved: the GATT tree present now is the reference for
    /// telling whether objects still trail ServicesResolved.
    init(device: Device, origin: ConnectionOrigin) {
        self.device = device
        self.origin = origin
        let path = device.path
        gattObjectsAtResolution = device.session.withCache { $0.gattObjectCount(under: path) }
        treeSettled = Flag()
    }

    /// How long the GATT tree must be quiet before a missing service counts as absent. BlueZ
    /// exports GATT objects in a burst; ServicesResolved may come before the burst.
    public static let serviceSettleTime: Duration = .milliseconds(500)

    /// How long no GATT object may be added before a tree that was still growing after
    /// ServicesResolved counts as complete, so that a service exported before its
    /// characteristics is not used half-built.
    public static let gattBurstQuietTime: Duration = .milliseconds(100)

    /// The GATT tree BlueZ exports for the device now.
    public var services: [GATTService] {
        let path = device.path
        return session.withCache { $0.gattServices(of: path) }
    }

    /// org.bluez.Battery1.Percentage (0-100) when BlueZ's battery plugin exports it.
    public var battery1Percentage: Int? {
        let path = device.path
        return session.withCache { $0.battery(of: path)?.percentage }
    }

    /// The service with `uuid`, waiting for GATT objects that arrive after ServicesResolved.
    ///
    /// While the device has no GATT objects, waits for them up to `timeout`; once it has some,
    /// the service counts as absent when the tree has been quiet for ``serviceSettleTime``
    /// without it. When objects were still being added after ServicesResolved, the service is
    /// returned only once the tree has been quiet for ``gattBurstQuietTime``, so that it comes
    /// with all its characteristics and descriptors. Every decision is taken from the cache
    /// inside the session's watcher, atomically with its registration, so objects exported
    /// between two looks are never missed.
    /// - Throws: ``BLEError/notSupported(_:_:)`` when the tree settles without it,
    ///   ``BLEError/timedOut(_:)`` (service lookup), ``BLEError/disconnected(_:)``, `CancellationError`.
    public func service(_ uuid: BluetoothUUID, timeout: Duration) async throws -> GATTService {
        let deadline = ContinuousClock.now + timeout
        let operation = device.operation(.serviceLookup, service: uuid)
        var objects = -1    // GATT objects under the device at the last look; -1: not looked yet
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { throw BLEError.timedOut(operation) }
            let settling = objects > 0 && remaining > Self.serviceSettleTime
            let window = settling ? Self.serviceSettleTime : remaining
            switch try await look(for: uuid, objectsBefore: objects, window: window, operation: operation) {
            case .found(let count):
                try await waitForTrailingObjects(objectsNow: count, deadline: deadline, operation: operation)
                if let found = services.first(where: { $0.uuid == uuid }) { return found }
                objects = -1    // gone again meanwhile (its objects re-exported): look again
            case .grew(let count):
                objects = count
            case nil where settling:
                throw BLEError.notSupported(operation, "no GATT service \(uuid.named) on \(device.address)")
            case nil:
                throw BLEError.timedOut(operation)
            }
        }
    }

    /// The whole GATT tree, once complete: waits for the first GATT objects when there are
    /// none yet (up to `timeout`), then, when objects were still being added after
    /// ServicesResolved, until none has been added for ``gattBurstQuietTime``.
    /// - Returns: the services (empty when the device exported none within `timeout`).
    /// - Throws: ``BLEError/disconnected(_:)``, ``BLEError/unavailable(_:)``, `CancellationError`.
    public func completeServices(timeout: Duration) async throws -> [GATTService] {
        let deadline = ContinuousClock.now + timeout
        let operation = device.operation(.serviceLookup)
        var objects = session.withCache { [path = device.path] in $0.gattObjectCount(under: path) }
        if objects == 0 {
            guard case .grew(let count)? = try await look(for: nil, objectsBefore: 0, window: timeout, operation: operation) else { return [] }
            objects = count
        }
        try await waitForTrailingObjects(objectsNow: objects, deadline: deadline, operation: operation)
        return services
    }

    /// The characteristics with `uuid` (in services with the UUID `service` when given), by
    /// handle, from the complete GATT tree; empty when there is none.
    ///
    /// None found in a tree that changes (a Service Changed: BlueZ removes the service's
    /// objects and exports them again at new paths, possibly between ServicesResolved and this
    /// call) is not the answer yet: the characteristic counts as absent only once the tree has
    /// been quiet for ``serviceSettleTime`` without it, or at `timeout`. One found in a tree
    /// still being added to is returned once no object has been added for
    /// ``gattBurstQuietTime``. Tree and object count are read together, and every wait decides
    /// from the cache inside the session's watcher, so a re-export between two looks is never
    /// missed.
    /// - Parameters:
    ///   - uuid: the characteristic's UUID.
    ///   - service: the UUID of the service to look in; nil for every service.
    ///   - timeout: for the whole lookup, the first GATT objects included.
    /// - Throws: ``BLEError/timedOut(_:)`` (service lookup) when the timeout comes before the
    ///   tree has been quiet for ``serviceSettleTime`` without it, ``BLEError/disconnected(_:)``,
    ///   ``BLEError/unavailable(_:)``, `CancellationError`.
    public func characteristics(_ uuid: BluetoothUUID, inService service: BluetoothUUID? = nil,
                                timeout: Duration) async throws -> [GATTCharacteristic] {
        let deadline = ContinuousClock.now + timeout
        let operation = device.operation(.serviceLookup, service: service, characteristic: uuid)
        let path = device.path
        _ = try await completeServices(timeout: timeout)
        var changed = false
        while true {
            let (tree, objects) = session.withCache { ($0.gattServices(of: path), $0.gattObjectCount(under: path)) }
            let matches = tree.filter { service == nil || $0.uuid == service }.flatMap { $0.characteristics.filter { $0.uuid == uuid } }
            if !matches.isEmpty && !changed { return matches }
            // Absent needs the tree quiet for the whole settle time; a deadline that comes first
            // is a timeout, as in service(_:timeout:).
            let quiet = matches.isEmpty ? Self.serviceSettleTime : Self.gattBurstQuietTime
            let window = min(quiet, deadline - .now)
            guard window > .zero else {
                if matches.isEmpty { throw BLEError.timedOut(operation) }
                return matches
            }
            guard case .grew? = try await look(for: nil, objectsBefore: objects, window: window, operation: operation) else {
                if matches.isEmpty && window < quiet { throw BLEError.timedOut(operation) }
                return matches      // quiet: absent, or complete
            }
            changed = true
        }
    }

    /// What one look at the GATT tree found.
    private enum Look: Sendable {
        /// The service is exported; the number of GATT objects under the device then.
        case found(objects: Int)
        /// The number of GATT objects under the device changed (or was first counted).
        case grew(objects: Int)
    }

    /// Waits up to `window` for the service `uuid` (nil: none) to be exported or the number
    /// of GATT objects under the device to differ from `objectsBefore`; nil when neither
    /// happens within `window`. Decided from the cache in the watcher.
    private func look(for uuid: BluetoothUUID?, objectsBefore: Int, window: Duration, operation: BLEOperation) async throws -> Look? {
        let devicePath = device.path
        let lost = device.linkLost(during: operation)
        do {
            return try await session.wait(for: operation, timeout: window) { cache, event -> WaitStep<Look?> in
                if let error = lost(cache, event) { return .fail(error) }
                if case .changed? = event { return .keepWaiting }   // properties never change the tree
                if let uuid, cache.hasGATTService(uuid, under: devicePath) {
                    return .done(.found(objects: cache.gattObjectCount(under: devicePath)))
                }
                let count = cache.gattObjectCount(under: devicePath)
                return count != objectsBefore ? .done(.grew(objects: count)) : .keepWaiting
            }
        } catch BLEError.timedOut(operation) {
            return nil
        }
    }

    /// Returns once the GATT tree is complete: at once when nothing was added after
    /// ServicesResolved, else when the number of objects has not changed for
    /// ``gattBurstQuietTime`` (or at `deadline`, leaving the timeout to the operation that follows).
    /// - Throws: ``BLEError/disconnected(_:)``, ``BLEError/unavailable(_:)``, `CancellationError`.
    private func waitForTrailingObjects(objectsNow: Int, deadline: ContinuousClock.Instant, operation: BLEOperation) async throws {
        guard !treeSettled.isSet, objectsNow > gattObjectsAtResolution else { return }
        var objects = objectsNow
        while deadline - .now > .zero {
            guard case .grew(let count)? = try await look(for: nil, objectsBefore: objects,
                                                          window: min(Self.gattBurstQuietTime, deadline - .now), operation: operation)
            else { break }
            objects = count
        }
        treeSettled.set()
    }

    /// The characteristic `uuid` of `service`.
    /// - Throws: ``BLEError/notSupported(_:_:)`` when the service lacks it.
    public func characteristic(_ uuid: BluetoothUUID, in service: GATTService) throws -> GATTCharacteristic {
        guard let found = service.characteristic(uuid) else {
            throw BLEError.notSupported(device.operation(.serviceLookup, service: service.uuid, characteristic: uuid),
                                        "no characteristic \(uuid.named) in service \(service.uuid.named) on \(device.address)")
        }
        return found
    }

    /// Runs a GATT call: InProgress answers are retried within `timeout`; a failure that comes
    /// with the link dropping is reported as ``BLEError/disconnected(_:)``.
    func retryingInProgress<T>(operation: BLEOperation, timeout: Duration, _ body: (Duration) async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                return try await body(deadline - .now)
            } catch BLEError.busy where deadline - .now > .milliseconds(60) {
                try await Task.sleep(for: .milliseconds(50))
            } catch let error as BLEError {
                guard case .failed = error else { throw error }
                throw await linkDropped(during: operation) ?? error
            }
        }
    }

    /// How long a failed GATT call waits for the link to be reported down. BlueZ fails the
    /// pending ATT requests of a link as it drops, and signals Connected=false just after.
    static let linkDropGrace: Duration = .milliseconds(250)

    /// The link loss (``BLEError/disconnected(_:reason:)``) when the link is down, or goes
    /// down within ``linkDropGrace``; nil when it stays up.
    func linkDropped(during operation: BLEOperation) async -> BLEError? {
        let lost = device.linkLost(during: operation)
        do {
            return try await session.wait(for: operation, timeout: Self.linkDropGrace) { cache, changes -> WaitStep<BLEError> in
                guard let error = lost(cache, changes) as? BLEError else { return .keepWaiting }
                return .done(error)
            }
        } catch {
            return nil
        }
    }
}
