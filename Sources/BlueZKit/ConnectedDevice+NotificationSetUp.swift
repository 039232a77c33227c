import DBusKit

/// How a characteristic's notifications are turned on (bluez/doc/org.bluez.GattCharacteristic.rst).
public enum NotifyMethod: Sendable, Equatable {
    /// StartNotify: a session of this client; each value comes as a PropertiesChanged of the
    /// characteristic's Value, to every watcher of the session. Ended by StopNotify (or the
    /// client leaving the bus); kept by bluetoothd over a link loss. The Value property also
    /// changes when any client reads the characteristic: such a read is seen as a value too.
    /// Several clients may hold sessions on one characteristic at once.
    case startNotify
    /// AcquireNotify: the values come as datagrams on the socket the reply carries, with the
    /// ATT MTU: only what the device notified, never a read. Ended by closing the socket;
    /// bluetoothd shuts it down on a link loss. One client at a time: while it is held,
    /// StartNotify and AcquireNotify of other clients are refused (NotPermitted "Notify
    /// acquired"), and it is refused (InProgress) while another client has a StartNotify
    /// session. Values the device sends before the CCC write is answered are not delivered.
    /// Needs a bus that passes Unix file descriptors, and (bluetoothd 5.66) the `notify` flag.
    case acquireNotify

    var member: String {
        switch self {
        case .startNotify: "StartNotify"
        case .acquireNotify: "AcquireNotify"
        }
    }

    /// The characteristic flags that allow it (bluetoothd would pass a StartNotify on
    /// whatever they say; AcquireNotify wants `notify`).
    var requiredFlags: [String] {
        switch self {
        case .startNotify: ["notify", "indicate"]
        case .acquireNotify: ["notify"]
        }
    }

    func call(on path: ObjectPath) -> MethodCall {
        switch self {
        case .startNotify: BlueZ.call(path, BlueZ.gattCharacteristicInterface, member)
        case .acquireNotify: BlueZ.call(path, BlueZ.gattCharacteristicInterface, member, [.stringVariantDictionary([:])])
        }
    }
}

/// The one way notifications are turned on and off, whoever wants them: `blectl notify`'s
/// reconnecting subscription (on each connection), `request`'s command channel, the
/// library's notification stream and its acquired notifications.
extension ConnectedDevice {
    /// bluetoothd before 5.6x answers a repeated StartNotify of a session it kept with this
    /// (Failed).
    static let alreadyNotifying = "Already notifying"

    /// Turns the notifications of `characteristic` on with `method`, following the
    /// characteristic when its object leaves.
    ///
    /// - A characteristic whose flags do not allow `method` is refused before anything is sent.
    /// - The call fails at once when the link is lost.
    /// - When the characteristic's object leaves while the call is pending (a GATT database
    ///   change: bluetoothd never answers it) or is gone already (UnknownObject), the
    ///   characteristic is found again by its service and characteristic UUIDs (the one at
    ///   the same position among those alike, located before the first call) within
    ///   ``Device/characteristicRelocationTimeout``, `onMove` is told, and the call goes to its
    ///   new object, at most ``relocationLimit`` times.
    /// - StartNotify answered InProgress (a session still being registered) is sent again
    ///   every 50 ms while `mayRetry` says so and more than 60 ms are left; Failed "Already
    ///   notifying" (older bluetoothd, a session this client kept) counts as success.
    /// - A Failed answer that comes with the link dropping (within ``linkDropGrace``) is
    ///   ``BLEError/disconnected(_:)``.
    /// - Parameters:
    ///   - deadline: the limit for the whole set-up, relocations included.
    ///   - mayRetry: asked before an InProgress answer is tried again.
    ///   - onMove: told of the characteristic at its new object, before the call goes there.
    /// - Returns: the characteristic the call succeeded on, and the reply (nil for "Already
    ///   notifying").
    /// - Throws: ``BLEError/notSupported(_:_:)`` (the flags, the method refused, or the
    ///   characteristic not found again in time), ``BLEError/timedOut(_:)`` (notification
    ///   setup) at `deadline`, ``BLEError/disconnected(_:)``, ``BLEError/busy(_:dbusError:message:)``,
    ///   ``BLEError/notPermitted(_:dbusError:message:)``, ``BLEError/failed(_:dbusError:message:)``
    ///   (UnknownObject when the object left more than ``relocationLimit`` times),
    ///   ``BLEError/unavailable(_:)``, `CancellationError`.
    func turnOnNotifications(
        _ characteristic: GATTCharacteristic, by method: NotifyMethod, deadline: ContinuousClock.Instant,
        mayRetry: @Sendable () -> Bool = { true }, onMove: @Sendable (GATTCharacteristic) -> Void = { _ in }
    ) async throws -> (GATTCharacteristic, Message?) {
        try require(characteristic, oneOf: method.requiredFlags, for: .notificationSetup, "notify")
        let locator = locator(for: characteristic)
        var current = characteristic
        var moves = 0
        while true {
            let operation = device.operation(.notificationSetup, service: current.service, characteristic: current.uuid)
            do {
                let reply = try await session.call(method.call(on: current.path), operation: operation, timeout: deadline - .now,
                                                   abortIf: linkLostOrRemoved(current.path, BlueZ.gattCharacteristicInterface, during: operation))
                return (current, reply)
            } catch BLEError.busy where method == .startNotify && deadline - .now > .milliseconds(60) && mayRetry() {
                try await Task.sleep(for: .milliseconds(50))
            } catch BLEError.failed(_, BlueZ.Error.failed, Self.alreadyNotifying) where method == .startNotify {
                return (current, nil)
            } catch let error where error is AttributeRemoved || Self.isUnknownObject(error) {
                guard moves < Self.relocationLimit else {
                    throw BLEError.failed(operation, dbusError: DBusErrorName.unknownObject,
                                          message: "\(Self.describe(current)) on \(device.address) left its object \(moves + 1) times")
                }
                moves += 1
                current = try await relocate(current, locator: locator, deadline: deadline)
                onMove(current)
            } catch let error as BLEError {
                guard case .failed = error else { throw error }
                throw await linkDropped(during: operation) ?? error
            }
        }
    }

    /// Whether bluetoothd is disconnecting the device (its disconnect timer, after some
    /// client's Disconnect: Connected is still true), asked, as clean-up would, right after
    /// this client took AcquireNotify's socket on `characteristic`. AcquireNotify does not
    /// check it, so the socket would die with the link a moment later; StartNotify checks it
    /// before anything else (5.66 to 5.87, src/gatt-client.c characteristic_start_notify) and
    /// answers NotConnected there, else NotPermitted "Notify acquired" (the socket is ours),
    /// with nothing changed.
    /// - Throws: ``BLEError/disconnected(_:)`` (notification setup) when it is disconnecting;
    ///   ``BLEError/timedOut(_:)`` at `deadline`, ``BLEError/unavailable(_:)``,
    ///   `CancellationError`. Any other answer means it is not.
    func checkNotDisconnecting(after acquiring: GATTCharacteristic, deadline: ContinuousClock.Instant) async throws {
        let operation = device.operation(.notificationSetup, service: acquiring.service, characteristic: acquiring.uuid)
        do {
            _ = try await session.call(NotifyMethod.startNotify.call(on: acquiring.path), operation: operation, timeout: deadline - .now)
            // Not possible while the socket is held; should a session come of it, it is ended.
            await session.stopNotifications(on: [acquiring.path])
        } catch let error as BLEError {
            switch error {
            case .disconnected, .timedOut, .unavailable: throw error
            default: return
            }
        }
    }

    /// The characteristic `locator` finds, once it is in the device's tree again, waited for
    /// up to ``Device/characteristicRelocationTimeout`` (and `deadline`).
    /// - Throws: ``BLEError/notSupported(_:_:)`` naming the characteristic when it is not
    ///   found again in time, ``BLEError/timedOut(_:)`` at `deadline`, the link lost.
    func relocate(_ characteristic: GATTCharacteristic, locator: CharacteristicLocator,
                  deadline: ContinuousClock.Instant) async throws -> GATTCharacteristic {
        let operation = device.operation(.notificationSetup, service: characteristic.service, characteristic: characteristic.uuid)
        let limit = ContinuousClock.now + Device.characteristicRelocationTimeout
        do {
            return try await relocated(deadline: min(deadline, limit), operation: operation) { locator.find(in: $0) }
        } catch BLEError.timedOut where ContinuousClock.now < deadline {
            throw BLEError.notSupported(operation, "\(Self.describe(characteristic)) on \(device.address) left (the device changed "
                + "its GATT database) and was not found again within \(Device.characteristicRelocationTimeout)")
        }
    }

    static func describe(_ characteristic: GATTCharacteristic) -> String {
        "characteristic \(characteristic.uuid.named) in service \(characteristic.service.named)"
    }

    /// Ends `continuation` when the link drops (``BLEError/disconnected(_:)``, notification
    /// setup) or when bluetoothd leaves or the bus is lost (``BLEError/unavailable(_:)``
    /// naming the notifications of `characteristic`). Returns the watcher, for the caller to
    /// remove.
    func finishingOnLinkLoss<Element>(_ continuation: AsyncThrowingStream<Element, any Error>.Continuation,
                                      of characteristic: GATTCharacteristic) -> UInt64 {
        let lost = device.linkLost(during: device.operation(.notificationSetup, service: characteristic.service,
                                                            characteristic: characteristic.uuid))
        let streaming = device.operation(.notifications, service: characteristic.service, characteristic: characteristic.uuid)
        return session.addWatcher { cache, event in
            if let error = event?.unavailability?.during(streaming) ?? lost(cache, event) { return { continuation.finish(throwing: error) } }
            return nil
        }
    }
}

extension Session {
    /// Waits, as clean-up, for a StartNotify that may still be pending, so that StopNotify
    /// follows a start that succeeded (bluetoothd answers StopNotify with InProgress until
    /// then): at most ``CleanupPolicy/pendingStartTimeout`` (cut to the command deadline), at
    /// least ``CleanupPolicy/wireTime``, so that a start already answered is seen as such.
    /// - Returns: what the start returned; nil when it failed or did not answer in time.
    func waitForPendingStart<T: Sendable>(_ start: Task<T, any Error>) async -> T? {
        let wait = max(CleanupPolicy.budget(CleanupPolicy.pendingStartTimeout), CleanupPolicy.wireTime)
        return try? await awaitCancellable(start, timeout: wait)
    }

    /// StopNotify, as clean-up, on each of `paths` still exported (an object that left took
    /// its session with it), in order, each reply waited for at most
    /// ``CleanupPolicy/interruptedTimeout``; errors dropped.
    func stopNotifications(on paths: [ObjectPath]) async {
        for path in paths where withCache({ $0[path, BlueZ.gattCharacteristicInterface] != nil }) {
            await sendAsCleanup(BlueZ.call(path, BlueZ.gattCharacteristicInterface, "StopNotify"), waitingUpTo: CleanupPolicy.interruptedTimeout)
        }
    }
}
