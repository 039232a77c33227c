// One session looking for several devices at once: its users share one discovery per
// adapter (bluetoothd allows one per client), started by the first, its filter widened to
// the merge of theirs, stopped by the last; one user leaving never stops the others'.

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite struct SharedDiscoveryTests {
    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!

    /// Opens a session on `sim` and runs `body` with it and its adapter.
    static func withSession<T>(_ sim: Simulator, _ body: (Session, Adapter) async throws -> T) async throws -> T {
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        return try await body(session, try Adapter.ready(in: session, named: nil))
    }

    /// Whether the simulated adapter has stopped discovering with no discovery session left.
    static func notDiscovering(_ sim: Simulator) async throws -> Bool {
        try await eventually(within: .seconds(10)) {
            let state = try await sim.state()
            return !state.discovering && state.discoverySessions.isEmpty
        }
    }

    @Test func threeFindsOnOneSessionEachConnectAndReadTheBattery() async throws {
        let addresses = ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:03", "C0:FF:EE:00:00:04"].map { BluetoothAddress($0)! }
        try await Simulator.with { sim in
            try await Self.withSession(sim) { session, adapter in
                // Cold: BlueZ knows none of them, so each find scans.
                #expect(addresses.allSatisfy { adapter.knownDevice($0) == nil })
                let levels = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                    for address in addresses {
                        group.addTask {
                            let device = try await Device.find(address, on: adapter, timeout: .seconds(20))
                            let reading = try await device.withConnection(timeout: .seconds(20)) { try await $0.batteryLevel(timeout: .seconds(10)) }
                            return (address.description, reading.percentage)
                        }
                    }
                    return try await group.reduce(into: [String: Int]()) { $0[$1.0] = $1.1 }
                }
                #expect(levels == ["C0:FF:EE:00:00:01": 87, "C0:FF:EE:00:00:03": 42, "C0:FF:EE:00:00:04": 55])
                #expect(try await Self.notDiscovering(sim), "discovery left running")
                #expect(session.discoveries.users(of: adapter.path) == 0)
                #expect(session.watcherCount == 0)
            }
        }
    }

    @Test func aJoiningUserWidensTheFilterAndSeesOnlyWhatItsOwnMatches() async throws {
        try await Simulator.with { sim in
            try await Self.withSession(sim) { session, adapter in
                let narrow = DiscoveryFilter(rssiMin: -57)
                try await adapter.withDiscovery(filter: narrow, setupTimeout: .seconds(10)) { narrowStream in
                    #expect(try await sim.state().discoverySessions.map(\.filter["RSSI"]) == [.number(-57)])
                    try await adapter.withDiscovery(filter: DiscoveryFilter(duplicateData: true), setupTimeout: .seconds(10)) { wideStream in
                        // One discovery, its filter the merge of both.
                        let sessions = try await sim.state().discoverySessions
                        #expect(sessions.count == 1)
                        #expect(sessions.first?.filter["RSSI"] == .number(-127))
                        #expect(sessions.first?.filter["DuplicateData"] == .bool(true))
                        #expect(session.discoveries.users(of: adapter.path) == 2)
                        // The wide user hears a device the narrow one must not be told of (:02, RSSI ~-60).
                        var wideHeard = Set<String>()
                        for try await batch in wideStream {
                            wideHeard.formUnion(batch.map(\.address.description))
                            if wideHeard.contains("C0:FF:EE:00:00:02") && wideHeard.contains("C0:FF:EE:00:00:01") { break }
                        }
                    }
                    // The narrow user got only advertisements at or above its floor.
                    var narrowHeard = [Advertisement]()
                    for try await batch in narrowStream {
                        narrowHeard += batch
                        if narrowHeard.contains(where: { $0.address == Self.probe }) { break }
                    }
                    #expect(narrowHeard.allSatisfy { ($0.rssi ?? -128) >= -57 })
                    #expect(!narrowHeard.contains { $0.address.description == "C0:FF:EE:00:00:02" })
                    // The wide user has left; the narrow one still discovers.
                    #expect(try await sim.state().discovering)
                }
                #expect(try await Self.notDiscovering(sim), "discovery left running")
            }
        }
    }

    @Test func aUserCancelledMidDiscoveryLeavesTheOthersDiscovering() async throws {
        try await Simulator.with { sim in
            try await Self.withSession(sim) { session, adapter in
                // Both scan until cancelled; `heard` counts the batches each one gets.
                let heard = Lock([0, 0])
                let scans = (0..<2).map { index in
                    Task {
                        try await adapter.withDiscovery(filter: DiscoveryFilter(duplicateData: true), setupTimeout: .seconds(10)) { stream in
                            for try await _ in stream { heard.withLock { $0[index] += 1 } }
                        }
                    }
                }
                #expect(await eventually(within: .seconds(30)) { heard.withLock { $0.allSatisfy { $0 > 0 } } }, "both scans did not hear devices")
                scans[0].cancel()
                _ = await scans[0].result
                // The other still discovers: bluetoothd still has our session, and new batches come.
                let state = try await sim.state()
                #expect(state.discovering && state.discoverySessions.count == 1)
                let before = heard.withLock { $0[1] }
                #expect(await eventually { heard.withLock { $0[1] } > before }, "the other scan stopped hearing devices")
                #expect(session.discoveries.users(of: adapter.path) == 1)
                // The last one cancelled: nothing left discovering.
                scans[1].cancel()
                _ = await scans[1].result
                #expect(try await Self.notDiscovering(sim), "discovery left running")
                #expect(session.discoveries.users(of: adapter.path) == 0)
                #expect(session.watcherCount == 0)
            }
        }
    }
}
