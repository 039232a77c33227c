import DBusKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Device {
    /// Connects, subscribes to the notifications of one characteristic and runs `body` with
    /// them as a stream of ``SubscriptionEvent``s (``NotificationSubscription/events``); with a ``ReconnectPolicy`` the subscription
    /// is kept across link losses. StopNotify and the Disconnect of a connection we made when
    /// `body` ends, however it ends.
    ///
    /// Setting up: connects (``connect(timeout:)``: the device must be known to BlueZ, see
    /// ``find(_:on:timeout:)``), waits for ServicesResolved, asks `characteristic` for the
    /// characteristic on that connection (one that can neither notify nor indicate is refused
    /// before anything is sent: ``BLEError/notSupported(_:_:)``), registers the value watcher,
    /// then StartNotify
    /// (InProgress answers retried): all within `timeout`. `body` runs once StartNotify has
    /// answered; values notified before that answer are in the stream too. A link lost during
    /// the set-up fails it, with or without a policy, except on a link found up
    /// (``ConnectionOrigin/alreadyConnected``): bluetoothd 5.66 refuses StartNotify with
    /// `org.bluez.Error.NotConnected` while it is disconnecting a link (its 2 s disconnect
    /// timer, e.g. after the command before failed), so when StartNotify is refused so, or the
    /// link goes down before the subscription is set up, this waits within `timeout` for
    /// Connected=false, connects anew and sets up again on that link (which is then ours to
    /// disconnect at the end).
    ///
    /// The stream: every value, once, in bus order, each with the bytes its own signal
    /// carried, tagged with its link number (unbounded buffer: none is dropped, whatever the
    /// reader's pace), plus ``SubscriptionEvent/linkLost(connection:)`` in bus order with
    /// the values. One watcher sees both for the whole subscription, so a value can be
    /// neither missed nor counted twice across a reconnection. The stream ends with
    /// ``BLEError/unavailable(_:)`` when bluetoothd leaves or the bus is lost; without a
    /// policy, with ``BLEError/disconnected(_:)`` (operation `notifications`) right after the
    /// link loss.
    ///
    /// Reconnecting (with `reconnect`): bluetoothd 5.66 keeps this client's StartNotify session
    /// over a link loss (Notifying stays true) and re-enables it by itself once the link and
    /// GATT are back (bluez/src/gatt-client.c). After a loss, attempts follow the policy's
    /// delays until its deadline: find the device by scanning if BlueZ removed its object,
    /// connect, wait for ServicesResolved, resolve the characteristic again (its object path
    /// may change), StartNotify again (it answers success, InProgress while bluetoothd is
    /// still re-registering, retried; or Failed "Already notifying" on older bluetoothd, taken
    /// as success; a removed device's session is created anew), then
    /// ``SubscriptionEvent/restored(connection:)``. A failed attempt (disconnected, timed
    /// out, BlueZ failure, busy, device not found) is reported as
    /// ``SubscriptionEvent/reconnectFailed(attempt:error:retryIn:)`` and retried; other
    /// errors (Bluetooth unavailable, permission, the characteristic gone) end the stream with
    /// that error; reaching the deadline without the subscription restored ends it, at the
    /// deadline, with ``BLEError/timedOut(_:)`` (connect).
    ///
    /// A GATT database change (Service Changed: bluetoothd removes the service's objects and
    /// exports them again at new paths), the link up: a StartNotify pending on a removed
    /// object fails at once and goes again to the characteristic found again by its service
    /// and characteristic UUIDs (``ConnectedDevice/relocationLimit`` times at most); a
    /// subscription whose object leaves after it was set up subscribes again on the new
    /// object, its values in the same stream (the values sent meanwhile reached no session).
    /// Not found again within ``characteristicRelocationTimeout``: the set-up, or the stream,
    /// ends with ``BLEError/notSupported(_:_:)`` naming the characteristic.
    ///
    /// At the end: StopNotify on every characteristic path a StartNotify succeeded on (waiting
    /// first, at most ``CleanupPolicy/pendingStartTimeout``, for one still pending), even when
    /// the link is down (the session is kept), errors dropped; then Disconnect if the last
    /// connection was made by us and is still up (a reconnection's Connect that is
    /// interrupted is abandoned by ``connect(timeout:)`` itself), waiting for the reply up to
    /// `disconnectTimeout` after a success, at most ``CleanupPolicy/interruptedTimeout``
    /// otherwise (zero: only put on the wire; bluetoothd completes it without us).
    ///
    /// AcquireNotify would replace the value source, not this structure: see the notes on
    /// `SubscriptionState` (in this file).
    /// - Parameters:
    ///   - timeout: the limit for the set-up (connect, services, characteristic, StartNotify).
    ///   - reconnect: how to reconnect after a link loss; nil ends the stream at the first loss.
    ///   - disconnectTimeout: how long to wait for the Disconnect reply after a success; zero
    ///     sends it and returns once it has left for the bus.
    ///   - characteristic: finds the characteristic on a connection (called once per
    ///     connection); what it throws ends the set-up or the subscription.
    /// - Returns: what `body` returns.
    /// - Throws: the errors of ``connect(timeout:)``, ``waitForServicesResolved(timeout:)``,
    ///   `characteristic`, ``BLEError/timedOut(_:)`` / ``BLEError/failed(_:dbusError:message:)``
    ///   (notification setup), what `body` throws (the stream's errors when it lets them out);
    ///   a ``BLEError/disconnected(_:)`` that came with Bluetooth going away is thrown as that
    ///   ``BLEError/unavailable(_:)``.
    public func withNotificationSubscription<T: Sendable>(
        timeout: Duration,
        reconnect: ReconnectPolicy? = nil,
        disconnectTimeout: Duration = .seconds(4),
        characteristic: @escaping @Sendable (ConnectedDevice) async throws -> GATTCharacteristic,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (NotificationSubscription) async throws -> T
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        let origin: ConnectionOrigin
        do {
            origin = try await connect(timeout: timeout)
        } catch {
            throw await refinedLinkLoss(error)
        }
        let state = SubscriptionState(origin: origin)
        var (stream, continuation) = SubscriptionEvents.make()
        var watcher: UInt64?
        let result: Result<T, any Error>
        do {
            let found: GATTCharacteristic
            do {
                found = try await subscribe(state, origin: origin, deadline: deadline, ending: reconnect == nil,
                                            characteristic: characteristic, into: continuation, watcher: &watcher)
            } catch let error as BLEError where origin == .alreadyConnected && !Task.isCancelled && error.isLinkLossBeforeAnyEffect {
                // The link we found was on its way down: bluetoothd 5.66 refuses StartNotify
                // with NotConnected during its disconnect timer (after the command before
                // failed and asked for Disconnect), or the link went down before its services
                // were resolved. Nothing is subscribed yet: once it is down, connect anew (this
                // command's link from then on) and subscribe on it, with a fresh stream.
                if let stale = watcher { session.removeWatcher(stale) }
                watcher = nil
                continuation.finish()
                (stream, continuation) = SubscriptionEvents.make()
                state.locked { $0 = SubscriptionState.Values(origin: nil, sessions: $0.sessions, removals: $0.removals) }
                let renewed = try await reconnectAfterLinkWentDown(deadline: deadline)
                state.locked { $0.origin = renewed }
                found = try await subscribe(state, origin: renewed, deadline: deadline, ending: reconnect == nil,
                                            characteristic: characteristic, into: continuation, watcher: &watcher)
            }
            let stream = stream, continuation = continuation
            result = .success(try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
                group.addTask { await self.followCharacteristic(state, removals: state.removed, events: continuation) }
                if let reconnect {
                    group.addTask {
                        await self.keepSubscribed(state, policy: reconnect, characteristic: characteristic, events: continuation)
                    }
                }
                let value = try await body(NotificationSubscription(characteristic: found, events: stream))
                group.cancelAll()
                return value
            })
        } catch {
            result = .failure(error)
        }
        if let watcher { session.removeWatcher(watcher) }
        continuation.finish()
        state.locked { $0.removals.finish() }
        await endSubscription(state, succeeded: (try? result.get()) != nil, disconnectTimeout: disconnectTimeout)
        do {
            return try result.get()
        } catch {
            throw await refinedLinkLoss(error)
        }
    }

    /// Subscribes on the connection `origin` describes: waits for ServicesResolved, resolves
    /// the characteristic (refusing one that can neither notify nor indicate), registers the
    /// watcher (into `watcher`, removed by the caller), then StartNotify within `deadline`.
    private func subscribe(_ state: SubscriptionState, origin: ConnectionOrigin, deadline: ContinuousClock.Instant, ending: Bool,
                           characteristic: @Sendable (ConnectedDevice) async throws -> GATTCharacteristic,
                           into continuation: SubscriptionEvents.Channel,
                           watcher: inout UInt64?) async throws -> GATTCharacteristic {
        try await waitForServicesResolved(timeout: deadline - .now)
        let connected = ConnectedDevice(device: self, origin: origin)
        let found = try await characteristic(connected)
        try connected.require(found, oneOf: Self.notifyingFlags, for: .notificationSetup, "notify")
        state.locked { $0.characteristic = found }
        watcher = watchSubscription(state, ending: ending, into: continuation)
        try await awaitCancellable(startNotify(found, on: connected, state: state, deadline: deadline))
        return state.locked { $0.characteristic } ?? found
    }

    /// The characteristic flags that allow a subscription (bluetoothd would pass a
    /// StartNotify on whatever they say).
    static let notifyingFlags = ["notify", "indicate"]

    // MARK: - The value source: StartNotify sessions and their PropertiesChanged signals

    /// Registers the one watcher of the subscription: values of the current characteristic
    /// path and the device's link state, in bus order, tagged with the link number.
    private func watchSubscription(_ state: SubscriptionState, ending: Bool,
                                   into events: SubscriptionEvents.Channel) -> UInt64 {
        let devicePath = path
        return session.addWatcher { cache, event in
            if let gone = event?.unavailability {
                // Bluetooth or the bus gone while values stream: the error names the stage.
                let operation = state.locked { s in
                    s.characteristic.map { BLEOperation(.notifications, address: address, service: $0.service, characteristic: $0.uuid) }
                }
                let error = operation.map { gone.during($0) } ?? gone
                return { events.finish(throwing: error) }
            }
            // Only an event about the device's own object (or none: the first run) can change
            // its Connected; a PropertiesChanged on another object, such as each notification
            // on the characteristic, cannot, and the cache is not read for it.
            let connected: Bool?
            if case .changed(let changedPath, _, _, _)? = event, changedPath != devicePath {
                connected = nil
            } else {
                connected = cache.property("Connected", of: devicePath, on: BlueZ.deviceInterface)?.bool == true
            }
            let (emitted, lost): (SubscriptionEvent?, BLEError?) = state.locked { s in
                if let connected { s.deviceConnected = connected }
                let up = s.deviceConnected
                guard let characteristic = s.characteristic else { return (nil, nil) }
                if up, case .removed(characteristic.path, let interfaces)? = event,
                   interfaces.contains(BlueZ.gattCharacteristicInterface), s.sessions.contains(characteristic.path) {
                    // Its object left with the link up (Service Changed): its session went
                    // with it. followCharacteristic subscribes again on the new object.
                    s.removals.yield(characteristic)
                    return (nil, nil)
                }
                if up != s.linkUp {
                    s.linkUp = up
                    if up {
                        s.connection += 1
                        return (nil, nil)
                    }
                    let operation = BLEOperation(.notifications, address: address, service: characteristic.service,
                                                 characteristic: characteristic.uuid)
                    return (.linkLost(connection: s.connection), ending ? BLEError.disconnected(operation) : nil)
                }
                guard case .changed? = event,
                      let bytes = event?.value(of: "Value", on: BlueZ.gattCharacteristicInterface, at: characteristic.path)?.bytes
                else { return (nil, nil) }
                return (.value(NotifiedValue(bytes: bytes, connection: s.connection, receivedAt: wallClockNow())), nil)
            }
            guard let emitted else { return nil }
            return {
                events.yield(emitted)
                if let lost { events.finish(throwing: lost) }
            }
        }
    }

    /// StartNotify on `characteristic` in a task of its own (its reply must be seen even when
    /// we are cancelled, so that StopNotify follows a start that succeeded): InProgress is
    /// retried within `deadline` until the subscription ends, Failed "Already notifying"
    /// (bluetoothd before 5.6x, for a session it kept) is success; a link loss fails it at
    /// once. The path is recorded for StopNotify when it succeeds.
    ///
    /// The characteristic's object leaving while the link is up (Service Changed: a pending
    /// call is then never answered) fails the call at once, as an UnknownObject answer does;
    /// the characteristic is found again by its UUIDs (``relocate(_:on:state:deadline:)``),
    /// becomes the subscription's, and StartNotify goes to its new object (at most
    /// ``ConnectedDevice/relocationLimit`` times).
    private func startNotify(_ characteristic: GATTCharacteristic, on connected: ConnectedDevice, state: SubscriptionState,
                             deadline: ContinuousClock.Instant) -> Task<Void, any Error> {
        let session = session
        // Made outside the subscription's lock: it reads the session's cache, whose lock is
        // held while the subscription's watcher takes this one (see Lock's lock order).
        let finder = connected.finder(for: characteristic)
        let find = state.locked { s in
            if s.finder == nil || s.characteristic?.path == characteristic.path { s.finder = finder }
            return s.finder!
        }
        let task = Task<Void, any Error> {
            var current = characteristic
            var moves = 0
            while true {
                let operation = operation(.notificationSetup, service: current.service, characteristic: current.uuid)
                let removedOrLost = connected.linkLostOrRemoved(current.path, BlueZ.gattCharacteristicInterface, during: operation)
                do {
                    _ = try await session.call(BlueZ.call(current.path, BlueZ.gattCharacteristicInterface, "StartNotify"),
                                               operation: operation, timeout: deadline - .now, abortIf: removedOrLost)
                    break
                } catch BLEError.busy where deadline - .now > .milliseconds(60) && !state.locked({ $0.ending }) {
                    try await Task.sleep(for: .milliseconds(50))
                } catch BLEError.failed(_, BlueZ.Error.failed, SubscriptionState.alreadyNotifying) {
                    break
                } catch let error where error is ConnectedDevice.AttributeRemoved || ConnectedDevice.isUnknownObject(error) {
                    guard moves < ConnectedDevice.relocationLimit else {
                        throw BLEError.failed(operation, dbusError: DBusErrorName.unknownObject,
                                              message: "\(Self.describe(current)) on \(address) left its object \(moves + 1) times")
                    }
                    moves += 1
                    current = try await relocate(current, on: connected, find: find, deadline: deadline)
                    state.locked { $0.characteristic = current }
                }
            }
            state.locked { _ = $0.sessions.insert(current.path) }
        }
        state.locked { $0.start = task }
        return task
    }

    /// How long a characteristic whose object left (the link up) is waited for at a new
    /// object before the subscription ends with ``BLEError/notSupported(_:_:)``.
    public static let characteristicRelocationTimeout: Duration = .seconds(5)

    /// The characteristic alike `characteristic` (same service and characteristic UUIDs, same
    /// position among those alike) once it is in the device's tree again, waited for up to
    /// ``characteristicRelocationTimeout`` (and `deadline`).
    /// - Throws: ``BLEError/notSupported(_:_:)`` naming the characteristic when it is not
    ///   found again in time, ``BLEError/timedOut(_:)`` at `deadline`, the link lost.
    private func relocate(_ characteristic: GATTCharacteristic, on connected: ConnectedDevice,
                          find: @escaping @Sendable ([GATTService]) -> GATTCharacteristic?,
                          deadline: ContinuousClock.Instant) async throws -> GATTCharacteristic {
        let operation = operation(.notificationSetup, service: characteristic.service, characteristic: characteristic.uuid)
        let limit = ContinuousClock.now + Self.characteristicRelocationTimeout
        do {
            return try await connected.relocated(deadline: min(deadline, limit), operation: operation, find: find)
        } catch BLEError.timedOut where ContinuousClock.now < deadline {
            throw BLEError.notSupported(operation, "\(Self.describe(characteristic)) on \(address) left (the device changed "
                + "its GATT database) and was not found again within \(Self.characteristicRelocationTimeout)")
        }
    }

    static func describe(_ characteristic: GATTCharacteristic) -> String {
        "characteristic \(characteristic.uuid.named) in service \(characteristic.service.named)"
    }

    /// Follows the subscription's characteristic when its object leaves mid-stream while the
    /// link is up (``SubscriptionState/Values/removals``): found again by its UUIDs and
    /// subscribed to again on its new object, the values on the same stream. Not found again,
    /// or StartNotify failing with the link still up, ends the stream with that error; the
    /// link going down meanwhile leaves the rest to the link-loss handling.
    private func followCharacteristic(_ state: SubscriptionState, removals: AsyncStream<GATTCharacteristic>,
                                      events: SubscriptionEvents.Channel) async {
        for await removed in removals {
            let connected = ConnectedDevice(device: self, origin: state.locked { $0.origin } ?? .connectedByUs)
            let deadline = ContinuousClock.now + Self.characteristicRelocationTimeout * 2
            do {
                guard let find = state.locked({ $0.finder }) else { continue }
                let found = try await relocate(removed, on: connected, find: find, deadline: deadline)
                state.locked { $0.characteristic = found }
                try await awaitCancellable(startNotify(found, on: connected, state: state, deadline: deadline))
            } catch is CancellationError {
                return
            } catch {
                let path = path
                let up = session.withCache { $0.property("Connected", of: path, on: BlueZ.deviceInterface)?.bool == true }
                if up { events.finish(throwing: error) }
            }
        }
    }

    // MARK: - Reconnecting

    /// After each link loss, reconnects and restores the subscription as `policy` says,
    /// until cancelled; a fatal error, or the deadline passing, ends the stream with it.
    private func keepSubscribed(_ state: SubscriptionState, policy: ReconnectPolicy,
                                characteristic: @escaping @Sendable (ConnectedDevice) async throws -> GATTCharacteristic,
                                events: SubscriptionEvents.Channel) async {
        do {
            while true {
                try await waitUntilLinkLost()
                // That link is gone: nothing to disconnect unless a reconnection succeeds (an
                // attempt that fails or is cancelled abandons its own Connect).
                state.locked { $0.origin = nil }
                var attempt = 0
                while true {
                    attempt += 1
                    let delay = policy.delay(beforeAttempt: attempt)
                    guard ContinuousClock.now + delay < policy.deadline else {
                        // No attempt can start in time: the subscription ends at the deadline,
                        // not before it.
                        try await Task.sleep(until: policy.deadline, clock: .continuous)
                        throw BLEError.timedOut(operation(.connect))
                    }
                    try await Task.sleep(for: delay)
                    do {
                        try await resubscribe(state, deadline: policy.deadline, characteristic: characteristic)
                        events.yield(.restored(connection: state.locked { $0.connection }))
                        break
                    } catch let error as BLEError where error.allowsReconnectAttempt && ContinuousClock.now < policy.deadline {
                        events.yield(.reconnectFailed(attempt: attempt, error: error, retryIn: policy.delay(beforeAttempt: attempt + 1)))
                    }
                }
            }
        } catch is CancellationError {
        } catch {
            events.finish(throwing: error)
        }
    }

    /// Returns once the device's link is down (Connected false or the object removed):
    /// decided on the cache at once, then per event.
    private func waitUntilLinkLost() async throws {
        let path = path
        let session = session
        try await withOneShot(timeout: nil) { (shot: OneShot<Void>) in
            session.watch(shot, during: nil) { cache, _ in
                cache.property("Connected", of: path, on: BlueZ.deviceInterface)?.bool == true ? .keepWaiting : .done(())
            }
        }
    }

    /// One reconnection: the device found again if BlueZ removed it, connected, services
    /// resolved, the characteristic resolved again, StartNotify answered.
    private func resubscribe(_ state: SubscriptionState, deadline: ContinuousClock.Instant,
                             characteristic: @Sendable (ConnectedDevice) async throws -> GATTCharacteristic) async throws {
        if adapter.knownDevice(address) == nil {
            _ = try await Device.find(address, on: adapter, timeout: deadline - .now)
        }
        let origin = try await connect(timeout: deadline - .now)
        state.locked { $0.origin = origin }
        try await waitForServicesResolved(timeout: deadline - .now)
        let connected = ConnectedDevice(device: self, origin: origin)
        let found = try await characteristic(connected)
        try connected.require(found, oneOf: Self.notifyingFlags, for: .notificationSetup, "notify")
        state.locked { $0.characteristic = found }
        try await awaitCancellable(startNotify(found, on: connected, state: state, deadline: deadline))
    }

    // MARK: - Clean-up

    /// StopNotify where sessions were started (after a start still pending), then the
    /// Disconnect of a connection we made that is still up: errors dropped, never cancelled
    /// half-way.
    private func endSubscription(_ state: SubscriptionState, succeeded: Bool, disconnectTimeout: Duration) async {
        let session = session
        // A StartNotify answered InProgress is not tried again; one in flight is waited for.
        state.locked { $0.ending = true }
        await runCleanup {
            if let start = state.locked({ $0.start }) {
                // At least ``CleanupPolicy/wireTime``, so that a start already answered is seen as such.
                let startWait = max(CleanupPolicy.budget(CleanupPolicy.pendingStartTimeout), CleanupPolicy.wireTime)
                _ = try? await awaitCancellable(start, timeout: startWait)
            }
            for path in state.locked({ $0.sessions.sorted { $0.description < $1.description } })
            where session.withCache({ $0[path, BlueZ.gattCharacteristicInterface] != nil }) {
                await session.sendAsCleanup(BlueZ.call(path, BlueZ.gattCharacteristicInterface, "StopNotify"),
                                            waitingUpTo: CleanupPolicy.interruptedTimeout)
            }
        }
        // A link already down (lost without a policy) has nothing left to disconnect.
        let path = path
        let linkUp = session.withCache { $0.property("Connected", of: path, on: BlueZ.deviceInterface)?.bool == true }
        if state.locked({ $0.origin }) == .connectedByUs && linkUp {
            await disconnectAsCleanup(waitingUpTo: Self.disconnectWait(disconnectTimeout, succeeded: succeeded))
        }
    }
}

/// What one notification subscription knows, shared by its watcher (on the connection's
/// queue), the set-up, the reconnecting task and the clean-up.
///
/// Where AcquireNotify would plug in: it is a second value source beside StartNotify, with
/// the same state. Per connection it would call AcquireNotify instead of ``startNotify``
/// (again after every reconnection: bluetoothd shuts the fd down on disconnect), read the
/// fd's datagrams (one ATT notification each) in a task that yields
/// ``SubscriptionEvent/value(_:)`` with `connection` read here, and close the fd instead of
/// StopNotify in the clean-up; the watcher would then only follow the link state. StartNotify
/// stays the choice where no early value may be missed: notifications sent before the CCC
/// write completes reach StartNotify sessions but not an acquired fd.
final class SubscriptionState: Sendable {
    /// bluetoothd before 5.6x answers a repeated StartNotify of a session it kept with this.
    static let alreadyNotifying = "Already notifying"

    struct Values {
        /// The characteristic on the current (or last) connection; nil until resolved.
        var characteristic: GATTCharacteristic?
        /// The link number values are tagged with.
        var connection = 1
        /// The link state as the watcher last saw it.
        var linkUp = true
        /// The device's Connected in the cache as of the event the watcher last ran for (it
        /// reads the cache only for events that can change it).
        var deviceConnected = true
        /// How the current connection came about: decides the Disconnect at the end; nil
        /// while reconnecting.
        var origin: ConnectionOrigin?
        /// The last StartNotify, pending or done.
        var start: Task<Void, any Error>?
        /// Characteristic paths a StartNotify succeeded on: StopNotify at the end.
        var sessions: Set<ObjectPath> = []
        /// The subscription is ending: a StartNotify answered InProgress is not retried.
        var ending = false
        /// Finds the characteristic again by its UUIDs (and position) after its object left.
        var finder: (@Sendable ([GATTService]) -> GATTCharacteristic?)?
        /// Characteristics whose object left mid-stream with the link up, for
        /// followCharacteristic.
        var removals: AsyncStream<GATTCharacteristic>.Continuation
    }

    private let values: Lock<Values>
    /// What the watcher yields into `removals`.
    let removed: AsyncStream<GATTCharacteristic>

    init(origin: ConnectionOrigin) {
        let (removed, removals) = AsyncStream.makeStream(of: GATTCharacteristic.self)
        self.removed = removed
        values = Lock(Values(origin: origin, removals: removals))
    }

    func locked<R>(_ body: (inout Values) -> R) -> R { values.withLock { body(&$0) } }
}

extension BLEError {
    /// Whether a reconnection attempt that failed so may be followed by another.
    var allowsReconnectAttempt: Bool {
        switch self {
        case .disconnected, .timedOut, .failed, .busy, .deviceNotFound: true
        default: false
        }
    }
}

/// CLOCK_REALTIME as the duration since the Unix epoch.
func wallClockNow() -> Duration {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
}
