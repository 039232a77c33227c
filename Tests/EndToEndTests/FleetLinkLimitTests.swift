// A fleet run against a controller that holds only so many links (the simulator's
// le_max_links): bluetoothd refuses a Connect beyond them with "le-connection-abort-by-local",
// and BlueZ keeps each link up for its 2 s disconnect timer after blectl leaves it. The run
// waits for a free link and connects again rather than losing devices.

import SimulatorHarness
import Testing

@Suite("several devices: a controller's link limit")
struct FleetLinkLimitTests {
    @Test("six devices through a controller of two links, four at a time: every battery read, none lost to the cap")
    func waitsForAFreeLink() async throws {
        try await Sim.with(faults: ["fleet": "6", "le_connect_serial": "1", "le_max_links": "2"]) { sim in
            let addresses = (1...6).map(Fleet.address)
            let run = await sim.blectl(["get-battery"] + addresses + ["--parallel", "4", "--timeout", "30"], timeout: .seconds(90))
            #expect(run.status == 0, "\(run)")
            let lines = SeveralDevicesTests.byAddress(run)
            for (i, address) in zip(1..., addresses) {
                #expect(lines[address]?["percentage"] == .int(Fleet.battery(i)), "\(address): \(String(describing: lines[address]))")
            }
            #expect(lines.count == 6, "\(run)")
            // The cap was met (so the wait was needed), and each device was connected once.
            let creations = try #require(try await sim.state().leCreations)
            #expect(creations.contains { $0.result == "link-limit" }, "the cap was never met: \(creations)")
            #expect(Set(creations.filter { $0.result == "connected" }.map(\.address)) == Set(addresses), "\(creations)")
            try await sim.expectClean()
        }
    }

    @Test("a controller of one link, ten devices four at a time: the Connects waiting for a link are served in the order they came")
    func servedInTurn() async throws {
        try await Sim.with(faults: ["fleet": "10", "le_connect_serial": "1", "le_max_links": "1"]) { sim in
            let addresses = (1...10).map(Fleet.address)
            let run = await sim.blectl(["get-battery"] + addresses + ["--parallel", "4", "--timeout", "60"], timeout: .seconds(120))
            #expect(run.status == 0, "\(run)")
            #expect(SeveralDevicesTests.byAddress(run).count == 10, "\(run)")
            let creations = try #require(try await sim.state().leCreations)
            var firstRefusal: [String: Double] = [:], firstAsked: [String: Double] = [:], connectedAt: [String: Double] = [:]
            for creation in creations {
                if firstAsked[creation.address] == nil { firstAsked[creation.address] = creation.queued }
                if creation.result == "link-limit", firstRefusal[creation.address] == nil { firstRefusal[creation.address] = creation.end }
                if creation.result == "connected" { connectedAt[creation.address] = creation.start }
            }
            #expect(firstRefusal.count >= 3, "the limit was met: \(creations)")
            // A device refused well before another device first asked is connected before it.
            for (waiter, refused) in firstRefusal {
                for (later, asked) in firstAsked where asked > refused + 0.3 {
                    let waiterAt = try #require(connectedAt[waiter]), laterAt = try #require(connectedAt[later])
                    #expect(waiterAt < laterAt, "\(later), which asked \(asked - refused) s after \(waiter) was refused, connected first")
                }
            }
            try await sim.expectClean()
        }
    }
}
