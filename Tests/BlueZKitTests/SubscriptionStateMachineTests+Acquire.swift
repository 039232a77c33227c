import Testing
import DBusKit
@testable import BlueZKit

/// ``SubscriptionStateMachine`` with AcquireNotify asked for: which values count, when the
/// set-up turns to StartNotify, and what the clean-up stops.
extension SubscriptionStateMachineTests {
    static let inProgress = BLEError.busy(setUp, dbusError: BlueZ.Error.inProgress, message: "In Progress")

    /// A machine that asked for AcquireNotify, resolved at `first` (flags read, notify).
    static func acquiring(policy: ReconnectPolicy? = nil, fallback: AcquireNotifyFallback? = nil) -> Machine {
        var machine = Machine(address: address, origin: .connectedByUs, policy: policy, method: .acquireNotify, fallback: fallback)
        machine.resolved(target(first))
        machine.startSent(Task {})
        return machine
    }

    @Test func withAcquireNotifyOnlyTheSocketsDatagramsAreValuesNotChangesOfValue() {
        var machine = Self.acquiring()
        machine.started(on: Self.first, by: .acquireNotify)
        #expect(machine.setUpSucceeded() == .stream)
        // Another client's read changes Value: not a notification here.
        #expect(machine.observe(.value(Self.first, [55], receivedAt: .seconds(1))) == .none)
        #expect(machine.observe(.value(Self.first, [7], receivedAt: .seconds(7), acquired: true)) == .yield(Self.value(7, link: 1)))
        // A datagram of another path is not the target's.
        #expect(machine.observe(.value(Self.other, [8], receivedAt: .seconds(8), acquired: true)) == .none)
        // And with StartNotify, a datagram is nothing (there is no socket to have sent it).
        var started = Self.streaming()
        #expect(started.observe(.value(Self.first, [9], receivedAt: .seconds(9), acquired: true)) == .none)
    }

    @Test func anAcquiredSocketIsClosedNotStoppedAndItsObjectLeavingIsFollowed() {
        var machine = Self.acquiring()
        machine.started(on: Self.first, by: .acquireNotify)
        _ = machine.setUpSucceeded()
        #expect(machine.sessions.isEmpty)
        #expect(machine.observe(.characteristicRemoved(Self.first)) == .follow(Self.target(Self.first)))
        _ = machine.end()
        #expect(machine.cleanUp() == Machine.CleanUp(stopNotify: [], disconnect: true))
    }

    @Test func inProgressDuringTheSetUpTurnsToStartNotifyAndThenChangesOfValueAreTheValues() {
        var machine = Self.acquiring()
        #expect(machine.mayFallBack(after: Self.inProgress))
        // Only InProgress: another refusal, a timeout or the link are errors of the set-up.
        #expect(!machine.mayFallBack(after: BLEError.busy(Self.setUp, dbusError: BlueZ.Error.notPermitted, message: "Notify acquired")))
        #expect(!machine.mayFallBack(after: BLEError.timedOut(Self.setUp)))
        #expect(!machine.mayFallBack(after: BLEError.disconnected(Self.setUp)))
        machine.fellBack(.otherClientSession)
        #expect(machine.method == .startNotify)
        #expect(machine.fallback == .otherClientSession)
        #expect(!machine.mayFallBack(after: Self.inProgress))
        machine.started(on: Self.first, by: .startNotify)
        _ = machine.setUpSucceeded()
        #expect(machine.observe(.value(Self.first, [5], receivedAt: .seconds(5))) == .yield(Self.value(5, link: 1)))
        _ = machine.end()
        #expect(machine.cleanUp() == Machine.CleanUp(stopNotify: [Self.first], disconnect: true))
    }

    @Test func inProgressOnAReconnectionTurnsToStartNotifyAndIsReported() {
        var machine = Self.acquiring(policy: Self.policy())
        machine.started(on: Self.first, by: .acquireNotify)
        _ = machine.setUpSucceeded()
        #expect(machine.observe(.link(up: false)) == .yieldAndReconnect(.linkLost(connection: 1)))
        #expect(machine.mayFallBack(after: Self.inProgress))
        // Before, the reconnection kept asking AcquireNotify, each attempt failing busy, as
        // long as the other client's session lasted.
        #expect(machine.fellBack(.otherClientSession) == .fellBackToStartNotify(.otherClientSession))
        #expect(machine.method == .startNotify)
        machine.connected(.connectedByUs)
        _ = machine.observe(.link(up: true))
        machine.started(on: Self.first, by: .startNotify)
        #expect(machine.restored() == Machine.Restored(event: .restored(connection: 2), stillReconnecting: false))
        #expect(machine.observe(.value(Self.first, [3], receivedAt: .seconds(3))) == .yield(Self.value(3, link: 2)))
        _ = machine.end()
        #expect(machine.cleanUp() == Machine.CleanUp(stopNotify: [Self.first], disconnect: true))
    }

    @Test func afterTheBodyEndedNothingFallsBack() {
        var machine = Self.acquiring()
        _ = machine.end()
        #expect(!machine.mayFallBack(after: Self.inProgress))
    }

    @Test func aCharacteristicThatOnlyIndicatesAndABusWithoutDescriptorsUseStartNotify() {
        var machine = Machine(address: Self.address, origin: .connectedByUs, policy: nil, method: .acquireNotify)
        let indicating = GATTCharacteristic(path: Self.first, uuid: .batteryLevel, service: .batteryService, flags: ["indicate"], descriptors: [])
        machine.resolved(Machine.Target(characteristic: indicating, locator: CharacteristicLocator(characteristic: indicating, ordinal: 0)))
        #expect(machine.method == .startNotify)
        #expect(machine.fallback == .indicateOnly)

        let noDescriptors = Self.acquiring(fallback: .noDescriptorPassing)
        #expect(noDescriptors.method == .startNotify)
        #expect(noDescriptors.fallback == .noDescriptorPassing)
    }
}
