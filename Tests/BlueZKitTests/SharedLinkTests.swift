// Two connections of one device: from two clients, the second Connect meets the first in
// progress and waits for its link; within one session, two withConnection calls share the
// link, which the last one out disconnects. And withConnection returns without waiting
// for BlueZ's disconnect timer.

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite struct SharedLinkTests {
    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!

    /// The simulator's view of the probe's link: nil when down, else whether it is being
    /// disconnected (BlueZ's disconnect timer running).
    static func probeLink(_ sim: Simulator) async throws -> Bool? {
        try await sim.state().connections.first { $0.address == probe.description }.map(\.disconnecting)
    }

    /// The probe's battery level read in `withConnection`, and how the link was found.
    static func readBattery(_ device: Device) async throws -> (Int, ConnectionOrigin) {
        try await device.withConnection(timeout: .seconds(20)) { connected in
            (try await connected.batteryLevel(timeout: .seconds(10)).percentage, connected.origin)
        }
    }

    @Test func twoClientsConnectingOneDeviceAtOnceBothSucceed() async throws {
        try await Simulator.with(faults: ["connect_held": "true"]) { sim in
            let first = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { first.close() }
            let second = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { second.close() }
            let devices = try await [first, second].asyncMap { session in
                try await Device.find(Self.probe, on: try Adapter.ready(in: session, named: nil), timeout: .seconds(20))
            }
            // The first client keeps its link until the second has its result: else, on a
            // machine slow enough, the first's Disconnect (and bluetoothd's 2 s timer) could
            // end that link before the second saw it up, and the second would rightly connect
            // anew.
            let secondDone = Lock(false)
            let firstRead = Task {
                try await devices[0].withConnection(timeout: .seconds(20)) { connected in
                    let level = try await connected.batteryLevel(timeout: .seconds(10)).percentage
                    _ = await eventually(within: .seconds(60)) { secondDone.withLock { $0 } }
                    return (level, connected.origin)
                }
            }
            #expect(try await eventually { try await sim.state().pendingConnects == [Self.probe.description] }, "the first Connect never pending")
            let secondRead = Task {
                defer { secondDone.withLock { $0 = true } }
                return try await Self.readBattery(devices[1])
            }
            // The second client's Connect met the first one in progress...
            let secondName = second.connection.uniqueName
            #expect(try await eventually {
                try await sim.calls().contains { $0.member == "Connect" && $0.sender == secondName && $0.outcome.hasPrefix("error:") }
            }, "the second Connect was never refused")
            // ... and waits for it rather than failing.
            try await sim.setFault("connect_held", "false")
            let (firstLevel, firstOrigin) = try await firstRead.value
            let (secondLevel, secondOrigin) = try await secondRead.value
            #expect(firstLevel == 87 && secondLevel == 87)
            #expect(firstOrigin == .connectedByUs)
            // The second client waits for the first's link, sending Connect again every
            // Device.connectionInProgressWait while none is up. A Connect of its own that
            // bluetoothd takes once the first link is up is answered success (5.66 src/device.c
            // dev_connect: an LE link already up), and then the second client's origin is, as
            // documented, connectedByUs: which one it is follows from its last Connect's answer.
            let secondConnects = try await sim.calls().filter { $0.member == "Connect" && $0.sender == secondName }
            let lastAnswered = try #require(secondConnects.last)
            #expect(secondOrigin == (lastAnswered.outcome.hasPrefix("error:") ? .alreadyConnected : .connectedByUs),
                    "\(secondConnects.map(\.outcome))")
            #expect(try await eventually(within: .seconds(10)) { try await Self.probeLink(sim) == nil }, "the link was left up")
        }
    }

    @Test func twoCallsInOneSessionShareTheLinkUntilTheLastLeaves() async throws {
        try await Simulator.with { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let device = try await Device.find(Self.probe, on: try Adapter.ready(in: session, named: nil), timeout: .seconds(20))
            let secondInside = Lock(false)
            let firstDone = Lock(false)
            async let first: ConnectionOrigin = device.withConnection(timeout: .seconds(20)) { connected in
                #expect(await eventually { secondInside.withLock { $0 } }, "the second call never got the link")
                return connected.origin
            }
            async let second: ConnectionOrigin = device.withConnection(timeout: .seconds(20)) { connected in
                secondInside.withLock { $0 = true }
                #expect(await eventually { firstDone.withLock { $0 } }, "the first call never returned")
                // The first call has returned; the link is still ours, not being disconnected.
                #expect(try await Self.probeLink(sim) == false)
                _ = try await connected.batteryLevel(timeout: .seconds(10))
                return connected.origin
            }
            let firstOrigin = try await first
            #expect(session.linkUsers.users(of: device.path) == 1)
            firstDone.withLock { $0 = true }
            let secondOrigin = try await second
            // One of them connected; the last one out disconnects.
            #expect([firstOrigin, secondOrigin].filter { $0 == .connectedByUs }.count == 1)
            #expect(session.linkUsers.users(of: device.path) == 0)
            #expect(try await eventually(within: .seconds(10)) { try await Self.probeLink(sim) == nil }, "the link was left up")
            let connects = try await sim.calls().filter { $0.member == "Connect" && $0.outcome == "reply" }
            #expect(connects.count == 1)
        }
    }

    @Test func withConnectionReturnsBeforeTheDisconnectTimer() async throws {
        try await Simulator.with { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let device = try await Device.find(Self.probe, on: try Adapter.ready(in: session, named: nil), timeout: .seconds(20))
            let (level, origin) = try await Self.readBattery(device)
            #expect(level == 87 && origin == .connectedByUs)
            // Returned with the Disconnect sent and BlueZ's 2 s timer still running...
            #expect(try await Self.probeLink(sim) == true)
            // ... after which the link is down.
            #expect(try await eventually(within: .seconds(10)) { try await Self.probeLink(sim) == nil }, "the link was left up")
        }
    }
}

extension Array {
    /// `transform` applied to each element in turn.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result = [T]()
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
