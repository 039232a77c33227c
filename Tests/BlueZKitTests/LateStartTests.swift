// A start call (StartDiscovery, StartNotify) whose reply comes only after the clean-up's wait
// for it gave up: what it started is stopped when the reply comes, so that nothing is left
// running in bluetoothd for a session that stays open.

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite struct LateStartTests {
    static let gattBattery = BluetoothAddress("C0:FF:EE:00:00:04")!

    @Test func aDiscoveryAnsweredOnlyAfterTheScanEndedIsStoppedWhenTheReplyComes() async throws {
        // Discovering goes true at once; the StartDiscovery reply comes 3 s later, long after
        // the scan (which goes on without it after half a second) has ended.
        try await Simulator.with(faults: ["start_discovery_reply_delay_ms": "3000"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            try await adapter.withDiscovery(filter: DiscoveryFilter(), setupTimeout: .seconds(20)) { _ in }
            // The session stays open: only a StopDiscovery can end its discovery.
            let stopped = try await eventually(within: .seconds(20), every: .milliseconds(100)) {
                try await sim.state().discoverySessions.isEmpty
            }
            #expect(stopped, "the discovery started by the late-answered StartDiscovery was left running")
            let left = try await sim.leftovers()
            #expect(left == [])
        }
    }

    @Test func notificationsAnsweredOnlyAfterTheCallerGaveUpAreStoppedWhenTheReplyComes() async throws {
        try await Simulator.with(faults: ["start_notify_held": "true"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.gattBattery, on: adapter, timeout: .seconds(20))
            try await device.withConnection(timeout: .seconds(20)) { connected in
                let battery = try await connected.service(.batteryService, timeout: .seconds(10))
                let level = try connected.characteristic(.batteryLevel, in: battery)
                let notifying = Task {
                    try await connected.withNotifications(level, setupTimeout: .seconds(60), onValue: { _ in }) {}
                }
                let pending = try await eventually(every: .milliseconds(50)) {
                    try await sim.state().pendingGATT.contains { $0.op == "StartNotify" }
                }
                #expect(pending, "StartNotify never reached the simulator")
                // Given up while the start is pending: the clean-up waits for it, then returns.
                notifying.cancel()
                _ = await notifying.result
                // Only now does bluetoothd answer, and start the session.
                try await sim.setFault("start_notify_held", "0")
                let stopped = try await eventually(within: .seconds(20), every: .milliseconds(50)) {
                    let state = try await sim.state()
                    return state.pendingGATT.isEmpty && state.notifySessions.isEmpty
                }
                #expect(stopped, "the notifications started by the late-answered StartNotify were left on")
                #expect(device.isConnected, "the link went down: the check above proved nothing")
            }
        }
    }

    @Test func aDiscoveryAnsweredAfterTheCallerTimedOutIsStoppedWhenTheReplyComes() async throws {
        // StartDiscovery answered (and the session started) 3 s after it was sent: the caller,
        // with a 1 s limit, has long given up; the start it left behind still gets its stop.
        try await Simulator.with(faults: ["start_discovery_delay_ms": "3000"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            await #expect(throws: BLEError.self) {
                try await adapter.withDiscovery(filter: DiscoveryFilter(), setupTimeout: .seconds(1)) { _ in }
            }
            let started = try await eventually(within: .seconds(20), every: .milliseconds(50)) {
                try await sim.calls().contains { $0.member == "StartDiscovery" && $0.outcome == "reply" }
            }
            #expect(started, "the delayed StartDiscovery was never answered")
            let stopped = try await eventually(within: .seconds(20), every: .milliseconds(100)) {
                let state = try await sim.state()
                return state.discoverySessions.isEmpty && state.pendingStartDiscovery.isEmpty
            }
            #expect(stopped, "the discovery started after the caller's timeout was left running")
            // And the adapter is free for the next user of the session.
            try await adapter.withDiscovery(filter: DiscoveryFilter(), setupTimeout: .seconds(20)) { _ in }
        }
    }
}
