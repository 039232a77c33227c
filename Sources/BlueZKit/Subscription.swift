import DBusKit

/// One notification subscription at work
/// (``Device/withNotificationSubscription(timeout:reconnect:method:disconnectTimeout:characteristic:_:)``):
/// its ``SubscriptionStateMachine`` under a lock, and the effects the machine asks for, run
/// outside it. Four parties feed the machine: the set-up, the watcher (on the session's
/// queue, in bus order), the maintenance task (following the characteristic, reconnecting)
/// and the clean-up.
final class Subscription: Sendable {
    typealias Machine = SubscriptionStateMachine

    let device: Device
    /// Finds the characteristic on a connection (once per connection).
    let characteristic: @Sendable (ConnectedDevice) async throws -> GATTCharacteristic
    let machine: Lock<Machine>
    /// The watcher of the current stream, removed at the end (or when the set-up starts over).
    private let watcher = Lock<UInt64?>(nil)
    /// The stream the watcher feeds, which the acquired sockets feed too.
    private let channel = Lock<SubscriptionEvents.Channel?>(nil)
    /// The socket of the last AcquireNotify (with AcquireNotify): closed when the next one
    /// is taken and at the end.
    private let acquired = Lock<SeqPacketSocket?>(nil)
    /// What the watcher hands to the maintenance task, in order.
    private let work: AsyncStream<Work>
    private let workQueue: AsyncStream<Work>.Continuation

    /// Work the maintenance task does, one item after another.
    enum Work: Sendable {
        /// The target's object left with the link up: find it again, subscribe there.
        case follow(Machine.Target)
        /// The link was lost: reconnect as the policy says.
        case reconnect
    }

    init(device: Device, origin: ConnectionOrigin, policy: ReconnectPolicy?, method: NotifyMethod,
         characteristic: @escaping @Sendable (ConnectedDevice) async throws -> GATTCharacteristic) {
        self.device = device
        self.characteristic = characteristic
        let fallback: AcquireNotifyFallback? = method == .acquireNotify && !device.session.connection.canPassUnixFileDescriptors
            ? .noDescriptorPassing : nil
        machine = Lock(Machine(address: device.address, origin: origin, policy: policy, method: method, fallback: fallback))
        (work, workQueue) = AsyncStream.makeStream(of: Work.self)
    }

    // MARK: - Setting up

    /// Subscribes on the connection `origin` describes and returns the characteristic and the
    /// stream; started over once on a new link when the link found up was going down
    /// (``SubscriptionStateMachine/setUpFailed(_:cancelled:)``).
    func setUp(on origin: ConnectionOrigin, deadline: ContinuousClock.Instant) async throws -> (GATTCharacteristic, SubscriptionEvents) {
        var origin = origin
        while true {
            let (events, channel) = SubscriptionEvents.make()
            do {
                let found = try await subscribe(on: origin, deadline: deadline, streamingInto: channel)
                if machine.withLock({ $0.setUpSucceeded() }) == .reconnect { workQueue.yield(.reconnect) }
                return (found, events)
            } catch {
                guard machine.withLock({ $0.setUpFailed(error, cancelled: Task.isCancelled) }) == .renew else {
                    channel.finish()
                    throw error
                }
                // Nothing is subscribed yet: once the link is down, connect anew (this
                // subscription's link from then on) and subscribe on it, with a fresh stream.
                removeWatcher()
                channel.finish()
                origin = try await device.reconnectAfterLinkWentDown(deadline: deadline)
                machine.withLock { $0.connected(origin) }
            }
        }
    }

    /// Subscribes on a connection: waits for ServicesResolved, resolves the characteristic,
    /// registers the watcher when given a stream (the set-up's; a reconnection keeps it), then
    /// StartNotify within `deadline`. Returns the characteristic StartNotify succeeded on.
    private func subscribe(on origin: ConnectionOrigin, deadline: ContinuousClock.Instant,
                           streamingInto channel: SubscriptionEvents.Channel?) async throws -> GATTCharacteristic {
        try await device.waitForServicesResolved(timeout: deadline - .now)
        let connected = ConnectedDevice(device: device, origin: origin)
        let found = try await characteristic(connected)
        // Located now, outside the machine's lock (it reads the session's cache).
        let target = Machine.Target(characteristic: found, locator: connected.locator(for: found))
        machine.withLock { $0.resolved(target) }
        if let channel { watch(into: channel) }
        try await awaitCancellable(startNotify(target, on: connected, deadline: deadline))
        return machine.withLock { $0.target?.characteristic } ?? found
    }

    /// Turns notifications on at `target` (``ConnectedDevice/turnOnNotifications(_:by:deadline:mayRetry:onMove:)``)
    /// by the machine's method, in a task of its own: its reply must be seen even when we are
    /// cancelled, so that StopNotify follows a start that succeeded, and an acquired socket
    /// is closed. AcquireNotify answered InProgress (set-up, reconnection or follow) turns to
    /// StartNotify (``SubscriptionStateMachine/mayFallBack(after:)``); after the set-up, the
    /// stream is told (``SubscriptionEvent/fellBackToStartNotify(_:)``).
    private func startNotify(_ target: Machine.Target, on connected: ConnectedDevice, deadline: ContinuousClock.Instant) -> Task<Void, any Error> {
        let machine = machine
        let task = Task<Void, any Error> { [self] in
            let onMove: @Sendable (GATTCharacteristic) -> Void = { moved in
                machine.withLock { $0.moved(to: Machine.Target(characteristic: moved, locator: target.locator)) }
            }
            if machine.withLock({ $0.method }) == .acquireNotify {
                do {
                    let (found, reply) = try await connected.turnOnNotifications(target.characteristic, by: .acquireNotify,
                                                                                 deadline: deadline, onMove: onMove)
                    let operation = device.operation(.notificationSetup, service: found.service, characteristic: found.uuid)
                    let (socket, _) = try ConnectedDevice.socket(from: reply, of: NotifyMethod.acquireNotify.member, operation: operation)
                    if connected.origin == .alreadyConnected {
                        // A link found up may be one bluetoothd is taking down: that fails the
                        // set-up as StartNotify's NotConnected would (a new link then).
                        do {
                            try await connected.checkNotDisconnecting(after: found, deadline: deadline)
                        } catch {
                            socket.close()
                            throw error
                        }
                    }
                    receive(from: socket, at: found.path)
                    machine.withLock { $0.started(on: found.path, by: .acquireNotify) }
                    return
                } catch where machine.withLock({ $0.mayFallBack(after: error) }) {
                    if let event = machine.withLock({ $0.fellBack(.otherClientSession) }) {
                        channel.withLock { $0 }?.yield(event)
                    }
                }
            }
            let (found, _) = try await connected.turnOnNotifications(
                target.characteristic, by: .startNotify, deadline: deadline,
                mayRetry: { machine.withLock { $0.mayRetryStart } }, onMove: onMove)
            machine.withLock { $0.started(on: found.path, by: .startNotify) }
        }
        machine.withLock { $0.startSent(task) }
        return task
    }

    /// Takes the values of an acquired socket into the stream, each as the machine sees it
    /// (the socket's own queue; the watcher runs on the session's). The socket replaces the
    /// one before, which is closed. Its end is not a link loss of its own: the device's
    /// Connected (or the characteristic's object leaving) says that, through the watcher.
    private func receive(from socket: SeqPacketSocket, at path: ObjectPath) {
        guard machine.withLock({ $0.isTakingEvents }) else {
            // The body ended while AcquireNotify was pending: nothing takes the values.
            socket.close()
            return
        }
        let previous = acquired.withLock { current in
            defer { current = socket }
            return current
        }
        previous?.close()
        let machine = machine
        let channel = channel
        // A datagram is one value, never longer than the largest ATT MTU, 517 (as
        // withAcquiredNotifications reads them).
        socket.receive(maximumLength: 517, onDatagrams: { datagrams in
            let receivedAt = wallClockNow()
            for datagram in datagrams {
                if case .yield(let event) = machine.withLock({ $0.observe(.value(path, datagram, receivedAt: receivedAt, acquired: true)) }) {
                    channel.withLock { $0 }?.yield(event)
                }
            }
        }, onEnd: { _ in })
    }

    // MARK: - The watcher

    /// Registers the one watcher of the stream: the values of the target's path and the
    /// device's link state, in bus order, read from each event into an
    /// ``SubscriptionStateMachine/Observation``.
    private func watch(into channel: SubscriptionEvents.Channel) {
        let devicePath = device.path
        let machine = machine
        let workQueue = workQueue
        self.channel.withLock { $0 = channel }
        let id = device.session.addWatcher { cache, event in
            let observation: Machine.Observation
            if let gone = event?.unavailability {
                observation = .unavailable(gone)
            } else if case .changed(let path, let interface, let changed, _)? = event, path != devicePath {
                // A PropertiesChanged on another object than the device's, such as each
                // notification, cannot change its Connected: the cache is not read for it.
                guard interface == BlueZ.gattCharacteristicInterface, let bytes = changed["Value"]?.bytes else { return nil }
                observation = .value(path, bytes, receivedAt: wallClockNow())
            } else if case .removed(let path, let interfaces)? = event, path != devicePath {
                guard interfaces.contains(BlueZ.gattCharacteristicInterface) else { return nil }
                observation = .characteristicRemoved(path)
            } else {
                let up = cache.property("Connected", of: devicePath, on: BlueZ.deviceInterface)?.bool == true
                observation = .link(up: up, reason: up ? nil : cache.disconnectReason(of: devicePath))
            }
            switch machine.withLock({ $0.observe(observation) }) {
            case .none:
                return nil
            case .yield(let event):
                return { channel.yield(event) }
            case .finish(let event, let error):
                return {
                    if let event { channel.yield(event) }
                    channel.finish(throwing: error)
                }
            case .yieldAndReconnect(let event):
                return {
                    channel.yield(event)
                    workQueue.yield(.reconnect)
                }
            case .follow(let target):
                return { workQueue.yield(.follow(target)) }
            }
        }
        watcher.withLock { $0 = id }
    }

    private func removeWatcher() {
        if let id = watcher.withLock({ $0.take() }) { device.session.removeWatcher(id) }
    }

    // MARK: - Following the characteristic, reconnecting

    /// Does the work the watcher hands over, one item after another, until cancelled (or the
    /// clean-up ends the work queue).
    func maintain(streamingInto channel: SubscriptionEvents.Channel) async {
        for await item in work {
            switch item {
            case .follow(let target): await follow(target, streamingInto: channel)
            case .reconnect: await reconnect(streamingInto: channel)
            }
        }
    }

    /// The target's object left mid-stream with the link up: found again by its UUIDs and
    /// subscribed to again on its new object, the values on the same stream. Not found again,
    /// or StartNotify failing, with the link still up ends the stream with that error; the
    /// link going down meanwhile leaves the rest to the reconnection.
    private func follow(_ left: Machine.Target, streamingInto channel: SubscriptionEvents.Channel) async {
        let connected = ConnectedDevice(device: device, origin: machine.withLock { $0.origin } ?? .connectedByUs)
        let deadline = ContinuousClock.now + Device.characteristicRelocationTimeout * 2
        do {
            let found = try await connected.relocate(left.characteristic, locator: left.locator, deadline: deadline)
            let target = Machine.Target(characteristic: found, locator: connected.locator(for: found))
            machine.withLock { $0.moved(to: target) }
            try await awaitCancellable(startNotify(target, on: connected, deadline: deadline))
        } catch is CancellationError {
        } catch {
            if machine.withLock({ $0.followFailed() }) { channel.finish(throwing: error) }
        }
    }

    /// After a link loss, reconnects and subscribes again as the policy says, until restored;
    /// an error that ends the stream, or the policy's deadline, ends it with that error.
    private func reconnect(streamingInto channel: SubscriptionEvents.Channel) async {
        while true {
            switch machine.withLock({ $0.reconnectionPlan(now: .now) }) {
            case .stop:
                return
            case .giveUp(let deadline):
                do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
                if let error = machine.withLock({ $0.deadlineReached() }) { channel.finish(throwing: error) }
                return
            case .attempt(_, let delay):
                do { try await Task.sleep(for: delay) } catch { return }
                do {
                    try await resubscribe()
                    guard let restored = machine.withLock({ $0.restored() }) else { return }
                    channel.yield(restored.event)
                    if !restored.stillReconnecting { return }
                } catch is CancellationError {
                    return
                } catch {
                    // The adapter gone, off or blocked: no attempt mends that.
                    let error = device.adapter.unavailability.map { BLEError.unavailable($0).during(BLEOperation(.connect, address: device.address)) }
                        ?? error
                    switch machine.withLock({ $0.attemptFailed(error, now: .now) }) {
                    case .retry(let report):
                        channel.yield(report)
                    case .finish:
                        channel.finish(throwing: error)
                        return
                    case .stop:
                        return
                    }
                }
            }
        }
    }

    /// One reconnection attempt, within the policy's deadline: the device found again if BlueZ
    /// removed it, connected, subscribed on that connection.
    private func resubscribe() async throws {
        guard let deadline = machine.withLock({ $0.policy?.deadline }) else { return }
        if device.adapter.knownDevice(device.address) == nil {
            _ = try await Device.find(device.address, on: device.adapter, timeout: deadline - .now)
        }
        let origin = try await device.connect(timeout: deadline - .now)
        machine.withLock { $0.connected(origin) }
        _ = try await subscribe(on: origin, deadline: deadline, streamingInto: nil)
    }

    // MARK: - Clean-up

    /// Ends the subscription: the stream and its watcher, then StopNotify where sessions were
    /// started (after a start still pending), then the Disconnect of a connection we made
    /// that is still up. Errors dropped, never cancelled half-way.
    func end(succeeded: Bool, disconnectTimeout: Duration, closing channel: SubscriptionEvents.Channel?) async {
        removeWatcher()
        channel?.finish()
        workQueue.finish()
        let start = machine.withLock { $0.end() }
        let acquired = acquired
        defer { acquired.withLock { $0.take() }?.close() }
        let session = device.session
        let machine = machine
        let plan = await runCleanup {
            if let start { _ = await session.waitForPendingStart(start) }
            let plan = machine.withLock { $0.cleanUp() }
            await session.stopNotifications(on: plan.stopNotify)
            return plan
        }
        // A link already down (lost without a policy) has nothing left to disconnect.
        if plan.disconnect && device.isConnected {
            await device.disconnectAsCleanup(waitingUpTo: Device.disconnectWait(disconnectTimeout, succeeded: succeeded))
        }
    }
}
