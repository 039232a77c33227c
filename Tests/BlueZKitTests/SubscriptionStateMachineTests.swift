import Testing
import DBusKit
@testable import BlueZKit

/// ``SubscriptionStateMachine`` without a bus: what each event does to the subscription's
/// state and which actions it asks for, in every state.
@Suite struct SubscriptionStateMachineTests {
    typealias Machine = SubscriptionStateMachine

    static let address = BluetoothAddress("C0:FF:EE:00:00:04")!
    static let first = ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_04/service0010/char0011")
    /// Where a GATT database change exports the characteristic again.
    static let second = ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_04/service0100/char0101")
    static let other = ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_04/service0010/char0014")

    static func target(_ path: ObjectPath) -> Machine.Target {
        let characteristic = GATTCharacteristic(path: path, uuid: .batteryLevel, service: .batteryService,
                                                flags: ["read", "notify"], descriptors: [])
        return Machine.Target(characteristic: characteristic, locator: CharacteristicLocator(characteristic: characteristic, ordinal: 0))
    }

    static let notifications = BLEOperation(.notifications, address: address, service: .batteryService, characteristic: .batteryLevel)
    static let setUp = BLEOperation(.notificationSetup, address: address, service: .batteryService, characteristic: .batteryLevel)
    static let connect = BLEOperation(.connect, address: address)

    static func policy(deadline: ContinuousClock.Instant = .now + .seconds(60)) -> ReconnectPolicy {
        ReconnectPolicy(initialDelay: .milliseconds(200), maximumDelay: .seconds(2), deadline: deadline)
    }

    static func value(_ byte: UInt8, link: Int) -> SubscriptionEvent {
        .value(NotifiedValue(bytes: [byte], connection: link, receivedAt: .seconds(Int64(byte))))
    }

    /// A machine whose set-up has resolved the characteristic at `first` and sent StartNotify.
    static func settingUp(origin: ConnectionOrigin = .connectedByUs, policy: ReconnectPolicy? = nil) -> Machine {
        var machine = Machine(address: address, origin: origin, policy: policy)
        machine.resolved(target(first))
        machine.startSent(Task {})
        return machine
    }

    /// A machine streaming from `first`: StartNotify answered there.
    static func streaming(origin: ConnectionOrigin = .connectedByUs, policy: ReconnectPolicy? = nil) -> Machine {
        var machine = settingUp(origin: origin, policy: policy)
        machine.started(on: first, by: .startNotify)
        let outcome = machine.setUpSucceeded()
        #expect(outcome == .stream)
        #expect(machine.state == .streaming)
        return machine
    }

    // MARK: - Values

    @Test func valuesOfTheTargetAreYieldedTaggedWithTheirLinkOthersAreNot() {
        var machine = Self.streaming()
        let action = machine.observe(.value(Self.first, [7], receivedAt: .seconds(7)))
        #expect(action == .yield(Self.value(7, link: 1)))
        let action2 = machine.observe(.value(Self.other, [8], receivedAt: .seconds(8)))
        #expect(action2 == .none)
        let action3 = machine.observe(.link(up: true))
        #expect(action3 == .none)
        #expect(machine.link == Machine.Link(number: 1, isUp: true))
    }

    @Test func valuesNotifiedBeforeStartNotifyAnswersAreYielded() {
        var machine = Self.settingUp()
        let action = machine.observe(.value(Self.first, [1], receivedAt: .seconds(1)))
        #expect(action == .yield(Self.value(1, link: 1)))
        #expect(machine.state == .settingUp(renewed: false))
    }

    // MARK: - Link lost

    @Test func aLinkLostWithoutAPolicyEndsTheStreamDisconnectedAfterTheLoss() {
        var machine = Self.streaming()
        let action = machine.observe(.link(up: false))
        #expect(action == .finish(yielding: .linkLost(connection: 1), throwing: .disconnected(Self.notifications)))
        #expect(machine.state == .streamEnded)
        // Nothing is taken after the end, even when the link comes back.
        let action2 = machine.observe(.link(up: true))
        #expect(action2 == .none)
        let action3 = machine.observe(.value(Self.first, [2], receivedAt: .seconds(2)))
        #expect(action3 == .none)
        // bluetoothd keeps the session over the loss: StopNotify still goes to it; the link was ours.
        _ = machine.end()
        let plan = machine.cleanUp()
        #expect(plan == Machine.CleanUp(stopNotify: [Self.first], disconnect: true))
    }

    @Test func aLinkLostWithAPolicyReconnectsAndTheNextLinkIsNumberTwo() {
        let policy = Self.policy()
        var machine = Self.streaming(policy: policy)
        let action = machine.observe(.link(up: false))
        #expect(action == .yieldAndReconnect(.linkLost(connection: 1)))
        #expect(machine.state == .reconnecting(attempt: 1))
        #expect(machine.origin == nil, "the lost link is nothing to disconnect")
        let now = ContinuousClock.now
        #expect(machine.reconnectionPlan(now: now) == .attempt(1, after: .milliseconds(200)))

        // The first attempt fails; the failure is reported with the next delay.
        let refused = BLEError.failed(Self.connect, dbusError: "org.bluez.Error.Failed", message: "le-connection-abort-by-local")
        let failure = machine.attemptFailed(refused, now: now)
        #expect(failure == .retry(report: .reconnectFailed(attempt: 1, error: refused, retryIn: .milliseconds(400))))
        #expect(machine.reconnectionPlan(now: now) == .attempt(2, after: .milliseconds(400)))

        // The second connects: the link is number 2 from Connected=true on, before StartNotify answers.
        machine.connected(.connectedByUs)
        let action2 = machine.observe(.link(up: true))
        #expect(action2 == .none)
        #expect(machine.link == Machine.Link(number: 2, isUp: true))
        machine.resolved(Self.target(Self.first))
        let action3 = machine.observe(.value(Self.first, [3], receivedAt: .seconds(3)))
        #expect(action3 == .yield(Self.value(3, link: 2)))
        machine.started(on: Self.first, by: .startNotify)
        let restored = machine.restored()
        #expect(restored == Machine.Restored(event: .restored(connection: 2), stillReconnecting: false))
        #expect(machine.state == .streaming)
        #expect(machine.origin == .connectedByUs)
        #expect(machine.sessions == [Self.first])
    }

    @Test func aLinkLostDuringAnAttemptIsReportedAndTheAttemptFailsOnItsOwn() {
        var machine = Self.streaming(policy: Self.policy())
        _ = machine.observe(.link(up: false))
        machine.connected(.connectedByUs)
        _ = machine.observe(.link(up: true))
        let action = machine.observe(.link(up: false))
        #expect(action == .yield(.linkLost(connection: 2)))
        #expect(machine.state == .reconnecting(attempt: 1))
        #expect(machine.origin == nil)
    }

    @Test func aLinkLostJustAfterARestoredSubscriptionStartsAnotherReconnection() {
        var machine = Self.streaming(policy: Self.policy())
        _ = machine.observe(.link(up: false))
        machine.connected(.connectedByUs)
        _ = machine.observe(.link(up: true))
        machine.started(on: Self.first, by: .startNotify)
        let action = machine.observe(.link(up: false))
        #expect(action == .yield(.linkLost(connection: 2)))
        let restored = machine.restored()
        #expect(restored == Machine.Restored(event: .restored(connection: 2), stillReconnecting: true))
        #expect(machine.state == .reconnecting(attempt: 1))
        #expect(machine.origin == nil)
    }

    @Test func aLinkLostBeforeTheSetUpAnsweredDependsOnThePolicy() {
        // With a policy: the loss is reported, and once StartNotify answers, reconnection starts.
        var kept = Self.settingUp(policy: Self.policy())
        let action = kept.observe(.link(up: false))
        #expect(action == .yield(.linkLost(connection: 1)))
        kept.started(on: Self.first, by: .startNotify)
        let outcome = kept.setUpSucceeded()
        #expect(outcome == .reconnect)
        #expect(kept.state == .reconnecting(attempt: 1))
        #expect(kept.origin == nil)

        // Without: the stream ends, and the body gets it ended.
        var ended = Self.settingUp()
        let action2 = ended.observe(.link(up: false))
        #expect(action2 == .finish(yielding: .linkLost(connection: 1), throwing: .disconnected(Self.notifications)))
        #expect(ended.state == .settingUp(renewed: false))
        ended.started(on: Self.first, by: .startNotify)
        let outcome2 = ended.setUpSucceeded()
        #expect(outcome2 == .stream)
        #expect(ended.state == .streamEnded)
    }

    // MARK: - A link found up that is going down

    @Test func startNotifyRefusedNotConnectedOnALinkFoundUpStartsOverOnANewLinkOnce() {
        var machine = Self.settingUp(origin: .alreadyConnected)
        // bluetoothd's NotConnected "Not Connected" is a disconnection during the set-up.
        let failure = machine.setUpFailed(BLEError.disconnected(Self.setUp), cancelled: false)
        #expect(failure == .renew)
        #expect(machine.state == .settingUp(renewed: true))
        #expect(machine.origin == nil)
        #expect(machine.target == nil)
        #expect(machine.link == Machine.Link(number: 1, isUp: true))
        #expect(machine.start == nil)
        // No watcher runs before the new link's characteristic is resolved.
        let action = machine.observe(.value(Self.first, [1], receivedAt: .seconds(1)))
        #expect(action == .none)

        // The new link is ours; a second refusal ends the set-up.
        machine.connected(.connectedByUs)
        machine.resolved(Self.target(Self.first))
        let failure2 = machine.setUpFailed(BLEError.disconnected(Self.setUp), cancelled: false)
        #expect(failure2 == .fail)
        #expect(machine.state == .streamEnded)
        _ = machine.end()
        let plan = machine.cleanUp()
        #expect(plan == Machine.CleanUp(stopNotify: [], disconnect: true))
    }

    @Test func theLinkFoundUpGoingDownUnderStartNotifyStartsOverEvenAfterTheStreamEnded() {
        var machine = Self.settingUp(origin: .alreadyConnected)
        let action = machine.observe(.link(up: false))
        #expect(action == .finish(yielding: .linkLost(connection: 1), throwing: .disconnected(Self.notifications)))
        let failure = machine.setUpFailed(BLEError.disconnected(Self.setUp), cancelled: false)
        #expect(failure == .renew)
    }

    @Test func onlyALinkLossOnALinkFoundUpBeforeAnyEffectStartsOver() {
        var ours = Self.settingUp(origin: .connectedByUs)
        let failure = ours.setUpFailed(BLEError.disconnected(Self.setUp), cancelled: false)
        #expect(failure == .fail)
        var cancelled = Self.settingUp(origin: .alreadyConnected)
        let failure2 = cancelled.setUpFailed(BLEError.disconnected(Self.setUp), cancelled: true)
        #expect(failure2 == .fail)
        var timedOut = Self.settingUp(origin: .alreadyConnected)
        let failure3 = timedOut.setUpFailed(BLEError.timedOut(Self.setUp), cancelled: false)
        #expect(failure3 == .fail)
        var other = Self.settingUp(origin: .alreadyConnected)
        let failure4 = other.setUpFailed(CancellationError(), cancelled: false)
        #expect(failure4 == .fail)
        for machine in [ours, cancelled, timedOut, other] { #expect(machine.state == .streamEnded) }
    }

    // MARK: - A GATT database change (Service Changed)

    @Test func theTargetLeavingWithTheLinkUpIsFollowedToItsNewObject() {
        var machine = Self.streaming()
        let action = machine.observe(.characteristicRemoved(Self.first))
        #expect(action == .follow(Self.target(Self.first)))
        #expect(machine.state == .following(left: Self.target(Self.first).characteristic))
        machine.moved(to: Self.target(Self.second))
        let action2 = machine.observe(.value(Self.first, [1], receivedAt: .seconds(1)))
        #expect(action2 == .none)
        let action3 = machine.observe(.value(Self.second, [2], receivedAt: .seconds(2)))
        #expect(action3 == .yield(Self.value(2, link: 1)))
        machine.started(on: Self.second, by: .startNotify)
        #expect(machine.state == .streaming)
        #expect(machine.link == Machine.Link(number: 1, isUp: true))
        // The old object took its session with it: clean-up stops what is still exported of both.
        _ = machine.end()
        let plan = machine.cleanUp()
        #expect(plan.stopNotify == [Self.first, Self.second])
    }

    @Test func onlyTheSubscribedTargetLeavingWithTheLinkUpWhileStreamingIsFollowed() {
        var other = Self.streaming()
        let action = other.observe(.characteristicRemoved(Self.other))
        #expect(action == .none)
        // Before StartNotify answered, the start follows the object by itself.
        var pending = Self.settingUp()
        let action2 = pending.observe(.characteristicRemoved(Self.first))
        #expect(action2 == .none)
        // The link down: the reconnection resolves the characteristic anew.
        var down = Self.streaming(policy: Self.policy())
        _ = down.observe(.link(up: false))
        let action3 = down.observe(.characteristicRemoved(Self.first))
        #expect(action3 == .none)
        #expect(down.state == .reconnecting(attempt: 1))
    }

    @Test func theTargetNotFoundAgainEndsTheStreamOnlyWithTheLinkUp() {
        var up = Self.streaming()
        _ = up.observe(.characteristicRemoved(Self.first))
        let ends = up.followFailed()
        #expect(ends)
        #expect(up.state == .streamEnded)

        var down = Self.streaming(policy: Self.policy())
        _ = down.observe(.characteristicRemoved(Self.first))
        let action = down.observe(.link(up: false))
        #expect(action == .yieldAndReconnect(.linkLost(connection: 1)))
        let ends2 = down.followFailed()
        #expect(!ends2)
        #expect(down.state == .reconnecting(attempt: 1))
    }

    // MARK: - Deadline, errors that end the stream, Bluetooth gone

    @Test func theDeadlineReachedWhileReconnectingEndsTheStreamTimedOutAtTheDeadline() {
        let start = ContinuousClock.now
        let policy = Self.policy(deadline: start + .seconds(1))
        var machine = Self.streaming(policy: policy)
        _ = machine.observe(.link(up: false))
        #expect(machine.reconnectionPlan(now: start) == .attempt(1, after: .milliseconds(200)))
        // 200 ms before the deadline, no attempt can start before it: wait for it, then end.
        #expect(machine.reconnectionPlan(now: start + .milliseconds(800)) == .giveUp(at: policy.deadline))
        let ending = machine.deadlineReached()
        #expect(ending == .timedOut(Self.connect))
        #expect(machine.state == .streamEnded)
        let ending2 = machine.deadlineReached()
        #expect(ending2 == nil)
    }

    @Test func anAttemptThatFailsAtTheDeadlineEndsTheStreamWithItsError() {
        let start = ContinuousClock.now
        var machine = Self.streaming(policy: Self.policy(deadline: start + .seconds(1)))
        _ = machine.observe(.link(up: false))
        let failure = machine.attemptFailed(BLEError.timedOut(Self.connect), now: start + .seconds(1))
        #expect(failure == .finish)
        #expect(machine.state == .streamEnded)
    }

    @Test func anErrorNoAttemptGetsOverEndsTheStream() {
        for error: any Error in [BLEError.permissionDenied("denied"), BLEError.notSupported(Self.setUp, "no 2a19"),
                                 BLEError.unavailable(.poweredOff("hci0"))] {
            var machine = Self.streaming(policy: Self.policy())
            _ = machine.observe(.link(up: false))
            let failure = machine.attemptFailed(error, now: .now)
            #expect(failure == .finish)
            #expect(machine.state == .streamEnded)
            #expect(machine.reconnectionPlan(now: .now) == .stop)
        }
    }

    @Test func bluetoothGoingAwayEndsTheStreamNamingTheNotifications() {
        var machine = Self.streaming(policy: Self.policy())
        let gone = machine.observe(.unavailable(.unavailable(.bluezLeft)))
        #expect(gone == .finish(yielding: nil, throwing: .unavailable(.bluezLeft, during: Self.notifications)))
        #expect(machine.state == .streamEnded)
        let lost = machine.observe(.link(up: false))
        #expect(lost == .none)
    }

    // MARK: - The body ending (cancellation) in each state

    @Test func endingWhileSettingUpWaitsForStartNotifyAndStopsTheSessionItMade() {
        var machine = Self.settingUp()
        let sent = machine.start
        let start = machine.end()
        #expect(start == sent)
        #expect(machine.state == .ending)
        #expect(!machine.mayRetryStart, "InProgress is not tried again once ending")
        // StartNotify answers during the clean-up's wait: its session is stopped too.
        machine.started(on: Self.first, by: .startNotify)
        let plan = machine.cleanUp()
        #expect(plan == Machine.CleanUp(stopNotify: [Self.first], disconnect: true))
        #expect(machine.state == .ended)
    }

    @Test func endingWhileStreamingStopsTheSessionAndDisconnectsOnlyALinkOfOurs() {
        var ours = Self.streaming(origin: .connectedByUs)
        _ = ours.end()
        let plan = ours.cleanUp()
        #expect(plan == Machine.CleanUp(stopNotify: [Self.first], disconnect: true))
        var found = Self.streaming(origin: .alreadyConnected)
        _ = found.end()
        let plan2 = found.cleanUp()
        #expect(plan2 == Machine.CleanUp(stopNotify: [Self.first], disconnect: false))
    }

    @Test func endingWhileFollowingStopsBothSessionsStillThere() {
        var machine = Self.streaming()
        _ = machine.observe(.characteristicRemoved(Self.first))
        machine.moved(to: Self.target(Self.second))
        _ = machine.end()
        let action = machine.observe(.value(Self.second, [1], receivedAt: .seconds(1)))
        #expect(action == .none)
        machine.started(on: Self.second, by: .startNotify)
        #expect(machine.state == .ending)
        let plan = machine.cleanUp()
        #expect(plan == Machine.CleanUp(stopNotify: [Self.first, Self.second], disconnect: true))
    }

    @Test func endingWhileReconnectingDisconnectsOnlyALinkTheAttemptBroughtUp() {
        var waiting = Self.streaming(policy: Self.policy())
        _ = waiting.observe(.link(up: false))
        _ = waiting.end()
        #expect(waiting.reconnectionPlan(now: .now) == .stop)
        let failure = waiting.attemptFailed(BLEError.timedOut(Self.connect), now: .now)
        #expect(failure == .stop)
        let restored = waiting.restored()
        #expect(restored == nil)
        let plan = waiting.cleanUp()
        #expect(plan == Machine.CleanUp(stopNotify: [Self.first], disconnect: false))

        var connected = Self.streaming(policy: Self.policy())
        _ = connected.observe(.link(up: false))
        connected.connected(.connectedByUs)
        _ = connected.end()
        let plan2 = connected.cleanUp()
        #expect(plan2 == Machine.CleanUp(stopNotify: [Self.first], disconnect: true))
    }

    @Test func endingAfterTheStreamEndedStillStopsTheKeptSession() {
        var machine = Self.streaming(policy: Self.policy())
        _ = machine.observe(.unavailable(.unavailable(.bluezLeft)))
        _ = machine.end()
        let action = machine.observe(.link(up: false))
        #expect(action == .none)
        let plan = machine.cleanUp()
        #expect(plan == Machine.CleanUp(stopNotify: [Self.first], disconnect: true))
    }
}
