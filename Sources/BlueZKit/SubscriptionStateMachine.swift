import DBusKit

/// The life of one notification subscription
/// (``Device/withNotificationSubscription(timeout:reconnect:method:disconnectTimeout:characteristic:_:)``)
/// as a plain value: the set-up, the subscription's watcher, the task that follows the
/// characteristic or reconnects, and the clean-up each feed it what happened and get back what
/// to do. It does nothing itself: the caller holds it under a lock and runs the actions (yield
/// to the stream, call BlueZ, start work) after releasing the lock.
///
/// - settingUp → streaming: StartNotify answered (→ reconnecting instead when the link was
///   lost meanwhile, with a policy);
/// - settingUp → settingUp(renewed): the link found up went down first (once);
/// - streaming → following: the characteristic's object left with the link up;
///   following → streaming: StartNotify answered on its new object;
/// - streaming, following → reconnecting: the link lost, with a policy;
///   reconnecting → streaming: subscribed again;
/// - → streamEnded: the link lost without a policy, Bluetooth gone, the characteristic not
///   found again, an error no attempt gets over, the policy's deadline, the set-up failed;
/// - any state → ending: the body ended; ending → ended: clean-up took its StopNotify list.
struct SubscriptionStateMachine: Sendable {
    /// Where the subscription is.
    enum State: Sendable, Equatable {
        /// Connecting, resolving the characteristic, StartNotify pending; `renewed` once the
        /// set-up started over on a new link because the link it found up was going down.
        case settingUp(renewed: Bool)
        /// StartNotify answered: values stream.
        case streaming
        /// The characteristic's object left with the link up (a GATT database change): it is
        /// being found again by its UUIDs and StartNotify sent to its new object.
        case following(left: GATTCharacteristic)
        /// The link was lost: reconnection `attempt` (from 1 for each loss) is next or under way.
        case reconnecting(attempt: Int)
        /// The stream has ended with an error (the link lost without a policy, Bluetooth gone,
        /// the characteristic not found again, reconnection given up) or the set-up failed; the
        /// body may still run. Nothing more is taken.
        case streamEnded
        /// The body has ended: clean-up is under way. A StartNotify answered InProgress is not
        /// tried again; one that succeeds still counts for StopNotify.
        case ending
        /// Clean-up has taken its StopNotify list.
        case ended
    }

    /// The characteristic values are taken from, and how to find it again when its object
    /// leaves.
    struct Target: Sendable, Equatable {
        var characteristic: GATTCharacteristic
        var locator: CharacteristicLocator
        var path: ObjectPath { characteristic.path }
    }

    /// The device's link as the subscription's watcher last saw it.
    struct Link: Sendable, Equatable {
        /// 1 for the link the subscription started on, one more each time Connected became
        /// true again since: what values are tagged with.
        var number = 1
        var isUp = true
    }

    /// What one event, as the subscription's watcher reads it, says.
    enum Observation: Sendable, Equatable {
        /// The device's Connected, read after an event that can change it (false: the device
        /// object is gone too), and when down, why as bluetoothd said it (5.83 and later).
        case link(up: Bool, reason: DisconnectReason? = nil)
        /// A GattCharacteristic1 object left.
        case characteristicRemoved(ObjectPath)
        /// A value of a characteristic: a change of its Value property (`acquired` false: a
        /// notification, or any client's read, when it is the target's) or a datagram of the
        /// socket AcquireNotify handed over (`acquired` true: a notification).
        case value(ObjectPath, [UInt8], receivedAt: Duration, acquired: Bool = false)
        /// bluetoothd left or the bus was lost.
        case unavailable(BLEError)
    }

    /// What the watcher does about an event, once outside the lock.
    enum WatcherAction: Sendable, Equatable {
        case none
        /// Yield the event to the stream.
        case yield(SubscriptionEvent)
        /// Yield the event (if any), then end the stream with the error.
        case finish(yielding: SubscriptionEvent?, throwing: BLEError)
        /// Yield the link loss and start reconnecting (``reconnectionPlan(now:)``).
        case yieldAndReconnect(SubscriptionEvent)
        /// Find the target again and subscribe on its new object
        /// (``moved(to:)``, ``started(on:)``, ``followFailed()``).
        case follow(Target)
    }

    /// How the set-up, having succeeded, goes on.
    enum SetUpOutcome: Sendable, Equatable {
        /// Values stream.
        case stream
        /// The link was lost meanwhile (with a policy): start reconnecting.
        case reconnect
    }

    /// What a failed set-up leads to.
    enum SetUpFailure: Sendable, Equatable {
        /// End with the error.
        case fail
        /// The link found up was going down: wait for it to go, connect anew, set up again
        /// on a fresh stream (the watcher of the old one removed).
        case renew
    }

    /// The next step of a reconnection.
    enum ReconnectionPlan: Sendable, Equatable {
        /// Wait `delay`, then make attempt `attempt`.
        case attempt(Int, after: Duration)
        /// No attempt can start before the policy's deadline: end the stream with
        /// ``BLEError/timedOut(_:)`` (connect) at that deadline (``deadlineReached()``).
        case giveUp(at: ContinuousClock.Instant)
        /// The subscription is no longer reconnecting (it ended meanwhile).
        case stop
    }

    /// What a failed reconnection attempt leads to.
    enum AttemptFailure: Sendable, Equatable {
        /// Report the failure and plan the next attempt.
        case retry(report: SubscriptionEvent)
        /// End the stream with the attempt's error.
        case finish
        /// The subscription ended meanwhile: nothing to do.
        case stop
    }

    /// A reconnection that subscribed again.
    struct Restored: Sendable, Equatable {
        /// ``SubscriptionEvent/restored(connection:)``, to report.
        var event: SubscriptionEvent
        /// The new link was lost already: the reconnection goes on.
        var stillReconnecting: Bool
    }

    /// What the clean-up does once the last StartNotify has answered (or it stopped waiting).
    struct CleanUp: Sendable, Equatable {
        /// The characteristic paths to send StopNotify to (each that is still exported), in order.
        var stopNotify: [ObjectPath]
        /// Whether the connection is ours to disconnect (if it is still up).
        var disconnect: Bool
    }

    let address: BluetoothAddress
    /// Reconnection after a link loss; nil ends the stream at the first loss.
    let policy: ReconnectPolicy?
    /// How notifications are turned on, on every connection: what was asked for, until the
    /// set-up falls back to StartNotify (``fellBack(_:)``). Values are taken only from what
    /// this method delivers.
    private(set) var method: NotifyMethod
    /// Why the set-up uses StartNotify although AcquireNotify was asked for.
    private(set) var fallback: AcquireNotifyFallback?
    private(set) var state: State = .settingUp(renewed: false)
    private(set) var link = Link()
    /// How the current connection came about: decides the Disconnect at the end. Nil while
    /// there is none of ours to account for (the link lost, a reconnection's Connect pending).
    private(set) var origin: ConnectionOrigin?
    /// Nil until the characteristic is resolved on the connection.
    private(set) var target: Target?
    /// The characteristic paths notifications were turned on at (either method).
    private(set) var subscribed: Set<ObjectPath> = []
    /// The characteristic paths a StartNotify succeeded on: StopNotify at the end, even with
    /// the link down (bluetoothd keeps the session over a link loss). An acquired socket needs
    /// none: closing it ends the session, and bluetoothd shuts it on a link loss.
    private(set) var sessions: Set<ObjectPath> = []
    /// The last StartNotify, pending or answered: clean-up waits for it.
    private(set) var start: Task<Void, any Error>?

    init(address: BluetoothAddress, origin: ConnectionOrigin, policy: ReconnectPolicy?, method: NotifyMethod = .startNotify,
         fallback: AcquireNotifyFallback? = nil) {
        self.address = address
        self.origin = origin
        self.policy = policy
        self.method = fallback == nil ? method : .startNotify
        self.fallback = fallback
    }

    /// Receiving the target's notifications, as errors name it.
    var streamingOperation: BLEOperation? {
        target.map { BLEOperation(.notifications, address: address, service: $0.characteristic.service, characteristic: $0.characteristic.uuid) }
    }

    /// Whether a StartNotify answered InProgress may be sent again (not once the body ended).
    var mayRetryStart: Bool {
        switch state {
        case .ending, .ended: false
        default: true
        }
    }

    // MARK: - The watcher

    /// The watcher saw `observation` (events in bus order, none before ``resolved(_:)``).
    mutating func observe(_ observation: Observation) -> WatcherAction {
        guard let target, isTakingEvents else { return .none }
        switch observation {
        case .value(let path, let bytes, let receivedAt, let acquired):
            guard path == target.path, acquired == (method == .acquireNotify) else { return .none }
            return .yield(.value(NotifiedValue(bytes: bytes, connection: link.number, receivedAt: receivedAt)))
        case .link(let up, let reason):
            guard up != link.isUp else { return .none }
            link.isUp = up
            if up {
                link.number += 1
                return .none
            }
            return linkLost(of: target, reason: reason)
        case .characteristicRemoved(let path):
            // Its session went with the object; a StartNotify pending elsewhere (set-up,
            // reconnection, a follow) moves to the new object by itself.
            guard case .streaming = state, link.isUp, path == target.path, subscribed.contains(path) else { return .none }
            state = .following(left: target.characteristic)
            return .follow(target)
        case .unavailable(let error):
            state = .streamEnded
            return .finish(yielding: nil, throwing: streamingOperation.map { error.during($0) } ?? error)
        }
    }

    /// Whether events (values, the link, the target leaving) are still taken.
    var isTakingEvents: Bool {
        switch state {
        case .settingUp, .streaming, .following, .reconnecting: true
        case .streamEnded, .ending, .ended: false
        }
    }

    private mutating func linkLost(of target: Target, reason: DisconnectReason?) -> WatcherAction {
        let lost = SubscriptionEvent.linkLost(connection: link.number)
        let disconnected = BLEError.disconnected(BLEOperation(.notifications, address: address, service: target.characteristic.service,
                                                              characteristic: target.characteristic.uuid), reason: reason)
        switch state {
        case .settingUp:
            // StartNotify fails on its own (its link watch), and the set-up may start over on a
            // new link with a new stream; answered already, ``setUpSucceeded()`` goes on.
            return policy == nil ? .finish(yielding: lost, throwing: disconnected) : .yield(lost)
        case .streaming, .following:
            guard policy != nil else {
                state = .streamEnded
                return .finish(yielding: lost, throwing: disconnected)
            }
            // Nothing to disconnect unless a reconnection succeeds (an attempt that fails or is
            // cancelled abandons its own Connect).
            origin = nil
            state = .reconnecting(attempt: 1)
            return .yieldAndReconnect(lost)
        case .reconnecting:
            // The attempt under way fails on its own (its link watch); a Connect it made no
            // longer holds a link.
            origin = nil
            return .yield(lost)
        case .streamEnded, .ending, .ended:
            return .none
        }
    }

    // MARK: - Setting up, and subscribing on each connection

    /// Connect answered (the set-up's, a renewal's or a reconnection's), whatever the state:
    /// a link we brought up is ours to disconnect at the end.
    mutating func connected(_ origin: ConnectionOrigin) {
        self.origin = origin
    }

    /// The characteristic was resolved on the connection: values are taken from its path.
    /// AcquireNotify, asked for, gives way to StartNotify for a characteristic that can only
    /// indicate (bluetoothd 5.66 grants AcquireNotify only with the `notify` flag).
    mutating func resolved(_ target: Target) {
        guard isTakingEvents else { return }
        self.target = target
        if method == .acquireNotify, case .settingUp = state, !target.characteristic.flags.contains("notify") {
            fellBack(.indicateOnly)
        }
    }

    /// Whether the subscription may turn to StartNotify after AcquireNotify failed with
    /// `error`: bluetoothd answers InProgress when another client has a StartNotify session
    /// on the characteristic (during the set-up, a reconnection or a follow).
    func mayFallBack(after error: any Error) -> Bool {
        guard method == .acquireNotify, isTakingEvents, case .busy(_, BlueZ.Error.inProgress, _)? = error as? BLEError else {
            return false
        }
        return true
    }

    /// The subscription turns to StartNotify, for `reason`, for the rest of its life. Returns
    /// the event to report when the set-up is over (the set-up reports it through
    /// ``NotificationSubscription/fallback``).
    @discardableResult
    mutating func fellBack(_ reason: AcquireNotifyFallback) -> SubscriptionEvent? {
        method = .startNotify
        fallback = reason
        if case .settingUp = state { return nil }
        return .fellBackToStartNotify(reason)
    }

    /// A StartNotify was sent (after ``resolved(_:)`` or ``moved(to:)``).
    mutating func startSent(_ task: Task<Void, any Error>) {
        start = task
    }

    /// StartNotify followed the characteristic to a new object (its old one left while the
    /// call was pending, or before it was sent).
    mutating func moved(to target: Target) {
        guard isTakingEvents else { return }
        self.target = target
    }

    /// Notifications were turned on at `path` by `method` (StartNotify answered, or
    /// AcquireNotify's socket taken): a StartNotify session is stopped at the end, whatever
    /// the state.
    mutating func started(on path: ObjectPath, by method: NotifyMethod) {
        subscribed.insert(path)
        if method == .startNotify { sessions.insert(path) }
        if case .following = state { state = .streaming }
    }

    /// The set-up's StartNotify answered: values stream; or, the link lost meanwhile, the
    /// stream has ended with it (no policy) or the reconnection starts.
    mutating func setUpSucceeded() -> SetUpOutcome {
        guard case .settingUp = state else { return .stream }
        if link.isUp {
            state = .streaming
            return .stream
        }
        guard policy != nil else {
            state = .streamEnded
            return .stream
        }
        origin = nil
        state = .reconnecting(attempt: 1)
        return .reconnect
    }

    /// The set-up failed with `error`. A link found up (not ours) that goes down before
    /// anything took effect on it (bluetoothd refuses StartNotify with NotConnected during its
    /// disconnect timer) is replaced by a new one, once: the subscription starts over as on
    /// its first link, keeping the sessions to stop.
    mutating func setUpFailed(_ error: any Error, cancelled: Bool) -> SetUpFailure {
        guard case .settingUp(renewed: false) = state, origin == .alreadyConnected, !cancelled,
              (error as? BLEError)?.isLinkLossBeforeAnyEffect == true else {
            if isTakingEvents { state = .streamEnded }
            return .fail
        }
        state = .settingUp(renewed: true)
        link = Link()
        origin = nil
        target = nil
        start = nil
        return .renew
    }

    // MARK: - Following the characteristic

    /// Finding the characteristic again, or StartNotify on its new object, failed. Returns
    /// whether that ends the stream (with that error): it does with the link up; with the
    /// link down, the reconnection takes over.
    mutating func followFailed() -> Bool {
        guard case .following = state, link.isUp else { return false }
        state = .streamEnded
        return true
    }

    // MARK: - Reconnecting

    /// When to make the next attempt: after the policy's delay, unless that would start it
    /// at or after the policy's deadline.
    func reconnectionPlan(now: ContinuousClock.Instant) -> ReconnectionPlan {
        guard case .reconnecting(let attempt) = state, let policy else { return .stop }
        let delay = policy.delay(beforeAttempt: attempt)
        // No attempt can start in time: the subscription ends at the deadline, not before it.
        guard now + delay < policy.deadline else { return .giveUp(at: policy.deadline) }
        return .attempt(attempt, after: delay)
    }

    /// The attempt failed with `error` at `now`: a failure that another attempt may get over
    /// (disconnected, timed out, BlueZ failure, busy, device not found), before the deadline,
    /// is reported and the next attempt planned; any other ends the stream.
    mutating func attemptFailed(_ error: any Error, now: ContinuousClock.Instant) -> AttemptFailure {
        guard case .reconnecting(let attempt) = state, let policy else { return .stop }
        guard let error = error as? BLEError, error.allowsReconnectAttempt, now < policy.deadline else {
            state = .streamEnded
            return .finish
        }
        state = .reconnecting(attempt: attempt + 1)
        return .retry(report: .reconnectFailed(attempt: attempt, error: error, retryIn: policy.delay(beforeAttempt: attempt + 1)))
    }

    /// The policy's deadline came with no attempt able to start: the stream ends.
    mutating func deadlineReached() -> BLEError? {
        guard case .reconnecting = state else { return nil }
        state = .streamEnded
        return .timedOut(BLEOperation(.connect, address: address))
    }

    /// The attempt subscribed again (StartNotify answered): the event to report. When the new
    /// link was lost already (its loss reported before), a new reconnection starts.
    mutating func restored() -> Restored? {
        guard case .reconnecting = state else { return nil }
        let event = SubscriptionEvent.restored(connection: link.number)
        guard link.isUp else {
            origin = nil
            state = .reconnecting(attempt: 1)
            return Restored(event: event, stillReconnecting: true)
        }
        state = .streaming
        return Restored(event: event, stillReconnecting: false)
    }

    // MARK: - Clean-up

    /// The body has ended, however: from now on StartNotify is not retried. Returns the last
    /// StartNotify, for the clean-up to wait for.
    mutating func end() -> Task<Void, any Error>? {
        state = .ending
        return start
    }

    /// What clean-up does, once the last StartNotify answered or it stopped waiting.
    mutating func cleanUp() -> CleanUp {
        state = .ended
        return CleanUp(stopNotify: sessions.sorted { $0.description < $1.description }, disconnect: origin == .connectedByUs)
    }
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
