import DBusKit

/// GATT operations on an attribute whose object leaves while the link stays up.
///
/// When a peripheral changes its GATT database (a Service Changed indication), bluetoothd
/// removes the objects of the services concerned (InterfacesRemoved) and exports them again
/// at their new handles, so at new object paths. A call pending on a removed object is never
/// answered, and a call on its old path answers `org.freedesktop.DBus.Error.UnknownObject`.
/// Every operation here notices its object leaving (at once, from the InterfacesRemoved),
/// finds the attribute again by its UUIDs (service, characteristic, descriptor: the same
/// one among several alike, by position) within the operation's timeout, and then:
///
/// - a read is sent again (reading has no effect on the device);
/// - StartNotify is sent again on the new object (its session went with the old one);
/// - a write that was pending is **not** sent again: whether the device took it is unknown,
///   and writing twice may do twice what it commands; it fails with
///   ``BLEError/outcomeUnknown(_:_:)``. A write answered UnknownObject never reached the
///   device and is sent again to the new object.
extension ConnectedDevice {
    /// The object of the attribute a call was pending on left the tree (the link still up).
    struct AttributeRemoved: Error {
        let path: ObjectPath
        /// Whether the call had been sent: false when the object was gone already when the
        /// call was to be sent (it then was not).
        let sent: Bool
    }

    /// How often one operation follows its attribute to a new object before giving up.
    static let relocationLimit = 3

    /// Fails a pending call at once when the device's link is lost (``Device/linkLost(during:)``)
    /// or, the link up, when the object at `path` loses `interface`: ``AttributeRemoved``.
    func linkLostOrRemoved(_ path: ObjectPath, _ interface: String, during operation: BLEOperation)
        -> @Sendable (ObjectCache, SessionEvent?) -> (any Error)? {
        let lost = device.linkLost(during: operation)
        return { cache, event in
            if let error = lost(cache, event) { return error }
            // The first look (no event) comes before the call is sent (Session.call).
            return cache[path, interface] == nil ? AttributeRemoved(path: path, sent: event != nil) : nil
        }
    }

    /// Whether `error` says the call never reached an attribute (UnknownObject: its object
    /// is gone), so nothing was done.
    static func isUnknownObject(_ error: any Error) -> Bool {
        if case BLEError.failed(_, DBusErrorName.unknownObject, _)? = error as? BLEError { return true }
        return false
    }

    /// Waits (up to `deadline`) until `find` finds the attribute in the device's GATT tree
    /// and returns it. The link lost fails at once.
    /// - Throws: ``BLEError/timedOut(_:)`` naming `operation`, ``BLEError/disconnected(_:)``,
    ///   ``BLEError/unavailable(_:)``, `CancellationError`.
    func relocated<A: Sendable>(deadline: ContinuousClock.Instant, operation: BLEOperation,
                                find: @escaping @Sendable ([GATTService]) -> A?) async throws -> A {
        let devicePath = device.path
        let lost = device.linkLost(during: operation)
        return try await session.wait(for: operation, timeout: deadline - .now) { cache, event -> WaitStep<A> in
            if let error = lost(cache, event) { return .fail(error) }
            if case .changed? = event { return .keepWaiting }
            return find(cache.gattServices(of: devicePath)).map { .done($0) } ?? .keepWaiting
        }
    }

    /// The characteristics of `services` with the UUIDs of `characteristic` (and of its service), by handle.
    static func alike(_ characteristic: GATTCharacteristic, in services: [GATTService]) -> [GATTCharacteristic] {
        alike(characteristic.uuid, service: characteristic.service, in: services)
    }

    static func alike(_ uuid: BluetoothUUID, service: BluetoothUUID, in services: [GATTService]) -> [GATTCharacteristic] {
        services.filter { $0.uuid == service }.flatMap { $0.characteristics.filter { $0.uuid == uuid } }
    }

    /// A finder for `characteristic` in a later tree: the one alike at its position now.
    func finder(for characteristic: GATTCharacteristic) -> @Sendable ([GATTService]) -> GATTCharacteristic? {
        locator(for: characteristic).find(in:)
    }

    /// Where `characteristic` stands among those alike in the tree now, to find it again.
    func locator(for characteristic: GATTCharacteristic) -> CharacteristicLocator {
        CharacteristicLocator(characteristic: characteristic,
                              ordinal: Self.alike(characteristic, in: services).firstIndex { $0.path == characteristic.path } ?? 0)
    }

    /// A finder for `descriptor` in a later tree: the descriptor with its UUID (the first)
    /// of the characteristic alike at its characteristic's position now.
    func finder(for descriptor: GATTDescriptor) -> @Sendable ([GATTService]) -> GATTDescriptor? {
        let alikeNow = Self.alike(descriptor.characteristic, service: descriptor.service, in: services)
        let ordinal = alikeNow.firstIndex { $0.descriptors.contains { $0.path == descriptor.path } } ?? 0
        return { services in
            let alike = Self.alike(descriptor.characteristic, service: descriptor.service, in: services)
            return alike.isEmpty ? nil : alike[min(ordinal, alike.count - 1)].descriptor(descriptor.uuid)
        }
    }

    /// Runs `body` on `attribute`, and again on its new object when the old one leaves
    /// (``AttributeRemoved``) or is already gone (UnknownObject), at most
    /// ``relocationLimit`` times, within `deadline`.
    /// - Parameters:
    ///   - what: the attribute as messages name it ("characteristic 2a26 in service 180a").
    ///   - mayRepeat: whether `body` may run again after its object left while its call was
    ///     pending; when not, that ends in ``BLEError/outcomeUnknown(_:_:)``.
    func following<A: Sendable, T>(
        _ attribute: A, what: String, deadline: ContinuousClock.Instant, operation: BLEOperation, mayRepeat: Bool,
        find: @escaping @Sendable ([GATTService]) -> A?, _ body: (A) async throws -> T
    ) async throws -> T {
        var current = attribute
        var moves = 0
        while true {
            do {
                return try await body(current)
            } catch let error where error is AttributeRemoved || Self.isUnknownObject(error) {
                if let removed = error as? AttributeRemoved, removed.sent, !mayRepeat {
                    throw BLEError.outcomeUnknown(operation, "\(what) on \(device.address) left while the write was pending (the "
                        + "device changed its GATT database): whether the device took the value is unknown, so it was not written again")
                }
                guard moves < Self.relocationLimit else {
                    throw BLEError.failed(operation, dbusError: DBusErrorName.unknownObject,
                                          message: "\(what) on \(device.address) left its object \(moves + 1) times")
                }
                moves += 1
                current = try await relocated(deadline: deadline, operation: operation, find: find)
            }
        }
    }
}

/// A characteristic as it can be found again in a later GATT tree, once its object has left:
/// the one with the same service and characteristic UUIDs at the same position (by handle)
/// among those alike, or the last of them when there are fewer now.
struct CharacteristicLocator: Sendable, Equatable {
    let characteristic: GATTCharacteristic
    /// Its position among the characteristics alike when it was located.
    let ordinal: Int

    func find(in services: [GATTService]) -> GATTCharacteristic? {
        let alike = ConnectedDevice.alike(characteristic, in: services)
        return alike.isEmpty ? nil : alike[min(ordinal, alike.count - 1)]
    }
}
