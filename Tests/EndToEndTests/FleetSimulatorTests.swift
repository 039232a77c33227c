// The simulator's fleets (sim/README.md, "Fleets"): fleet=N sensors with the values their
// number gives, LE connections made one at a time in the order asked (le_connect_serial),
// the link cap (le_max_links) and what a second Connect of one device answers. Device1
// calls go through dbus-send, each its own client, as separate programs would make them.

import Foundation
import SimulatorHarness
import Testing

@Suite("simulated fleets: connections one at a time, the link cap")
struct FleetSimulatorTests {
    /// Device1.`member` of fleet device `i` by dbus-send, to its end.
    static func call(_ sim: Sim, _ i: Int, _ member: String) async throws -> ProcessResult {
        try await launch(sim, i, member).finish(timeout: .seconds(30))
    }

    /// Device1.`member` of fleet device `i` by dbus-send, returning at once.
    static func launch(_ sim: Sim, _ i: Int, _ member: String) async throws -> RunningProcess {
        let simulator = sim.simulator
        return try await offThread {
            try simulator.launch("/usr/bin/dbus-send", ["--system", "--print-reply", "--reply-timeout=30000",
                                                        "--dest=org.bluez", Fleet.path(i), "org.bluez.Device1.\(member)"])
        }
    }

    /// Finds fleet devices 1-3, then asks each to Connect in turn, each once the one before is
    /// in the controller's hands: 1 being created, then 2 and 3 queued behind it.
    /// - Returns: their addresses and the three dbus-send processes.
    static func connectThreeInTurn(_ sim: Sim) async throws
        -> (addresses: [String], first: RunningProcess, second: RunningProcess, third: RunningProcess) {
        try await discover(sim, 3)
        let a = (1...3).map(Fleet.address)
        let first = try await launch(sim, 1, "Connect")
        try #expect(await sim.waitForState { $0.leConnect?.creating == [a[0]] }, "device 1 never creating")
        let second = try await launch(sim, 2, "Connect")
        try #expect(await sim.waitForState { $0.leConnect?.queued == [a[1]] }, "device 2 never queued")
        let third = try await launch(sim, 3, "Connect")
        let queue = try await sim.waitForState { $0.leConnect?.queued == [a[1], a[2]] && $0.leConnect?.creating == [a[0]] }
        #expect(queue, "devices 2 and 3 never queued behind 1")
        return (a, first, second, third)
    }

    /// Scans until the first `n` fleet devices are in BlueZ's object tree.
    static func discover(_ sim: Sim, _ n: Int) async throws {
        let run = await sim.blectl(["scan", "--name", "blesim Fleet", "--count", "\(n)", "--timeout", "30"])
        #expect(run.status == 0, "\(run)")
        try #expect(await sim.state().devices.filter { $0.hasPrefix("C0:FF:EE:F1:") }.count == n)
    }

    @Test("fleet=200: every sensor advertises at its computed address and name; battery i % 101, firmware 1.0.i")
    func fleetWorld() async throws {
        try await Sim.with(faults: ["fleet": "200"]) { sim in
            let scan = await sim.blectl(["scan", "--name", "blesim Fleet", "--count", "200", "--timeout", "30"])
            #expect(scan.status == 0, "\(scan)")
            let found = Dictionary(uniqueKeysWithValues: scan.jsonLines().compactMap { line -> (String, String)? in
                guard let address = line["address"]?.string, let name = line["name"]?.string else { return nil }
                return (address, name)
            })
            let expected = Dictionary(uniqueKeysWithValues: (1...200).map { (Fleet.address($0), String(format: "blesim Fleet %04d", $0)) })
            #expect(found == expected)
            #expect(Fleet.address(42) == "C0:FF:EE:F1:00:2A" && Fleet.address(200) == "C0:FF:EE:F1:00:C8")

            for i in [1, 42, 200] {
                let battery = await sim.blectl(["get-battery", Fleet.address(i)])
                #expect(battery.status == 0, "\(battery)")
                #expect(battery.jsonObject() == ["address": .string(Fleet.address(i)), "percentage": .int(Fleet.battery(i)),
                                                 "source": "battery1"])
            }
            #expect(Fleet.battery(200) == 99)
            let version = await sim.blectl(["get-version", Fleet.address(200)])
            #expect(version.status == 0, "\(version)")
            let info = try #require(version.jsonObject())
            #expect(info["firmware_revision"] == "1.0.200")
            #expect(info["manufacturer_name"] == "Blesim Fleet")
            #expect(info["model_number"] == "Fleet-1")
        }
    }

    @Test("le_connect_serial: three Connects wait their turn, in the order asked, each taking connect_latency_ms")
    func serialized() async throws {
        // The first creation is held under way until all three are asked for (no time window
        // to meet, loaded machine or not); then each takes 2.5 s.
        try await Sim.with(faults: ["fleet": "3", "le_connect_serial": "1", "connect_latency_ms": "2500", "le_create_held": "1"]) { sim in
            let (a, first, second, third) = try await Self.connectThreeInTurn(sim)
            // Waiting is nothing but a later reply: no Connected change before the turn.
            try #expect(await sim.state().pendingConnects.sorted() == a)
            try #expect(await sim.deviceState(a[2]).connecting == "queued")
            try #expect(await sim.state().connections.isEmpty)
            try await sim.setFault("le_create_held", "0")

            for process in [first, second, third] {
                let result = try await process.finish(timeout: .seconds(30))
                #expect(result.status == 0, "\(result.stderr)")
            }
            let state = try await sim.state()
            let creations = try #require(state.leCreations)
            #expect(creations.map(\.address) == a)
            #expect(creations.map(\.result) == ["connected", "connected", "connected"])
            for (index, creation) in creations.enumerated() {
                let start = try #require(creation.start), end = try #require(creation.end)
                #expect(end - start >= 2.495, "creation \(index + 1) took \(end - start) s")
                if index > 0 {
                    #expect(start >= creations[index - 1].end ?? .infinity, "creation \(index + 1) started before \(index) ended")
                }
            }
            // The third, asked while the first was being made, waited for the rest of it and
            // for the whole second: more than one latency.
            #expect((creations[2].start ?? 0) - creations[2].queued >= 2.495)
            let connector = try #require(state.leConnect)
            #expect(connector.serial && connector.maxLinks == 7 && connector.links == 3)
            #expect(connector.creating.isEmpty && connector.queued.isEmpty)
            let connects = try await sim.calls().filter { $0.member == "Connect" }
            #expect(connects.map(\.path) == (1...3).map(Fleet.path))
            #expect(connects.allSatisfy { $0.outcome == "reply" })
        }
    }

    @Test("le_connect_serial: a Disconnect of a device waiting its turn, or being connected, fails its Connect br-connection-canceled and frees the turn")
    func cancelled() async throws {
        // The first creation is held under way until the test has disconnected it: no time
        // window to meet, loaded machine or not.
        try await Sim.with(faults: ["fleet": "3", "le_connect_serial": "1", "le_create_held": "1"]) { sim in
            let (a, first, second, third) = try await Self.connectThreeInTurn(sim)

            for i in [2, 1] {     // the waiting one, then the one being connected
                let disconnect = try await Self.call(sim, i, "Disconnect")
                #expect(disconnect.status == 0, "\(disconnect.stderr)")
            }
            try await sim.setFault("le_create_held", "0")     // the third's creation, when it comes, goes on
            for process in [first, second] {
                let result = try await process.finish(timeout: .seconds(30))
                #expect(result.status == 1)
                #expect(result.stderr.contains("org.bluez.Error.Failed: br-connection-canceled"), "\(result.stderr)")
            }
            let connected = try await third.finish(timeout: .seconds(30))
            #expect(connected.status == 0, "\(connected.stderr)")
            let state = try await sim.state()
            #expect(state.connections.map(\.address) == [a[2]])
            let creations = try #require(state.leCreations)
            #expect(creations.map(\.address) == a)
            #expect(creations.map(\.result) == ["cancelled", "cancelled", "connected"])
            #expect(creations[1].start == nil, "device 2 never had its turn")
            // Device 3's turn came when device 1's creation was given up (it was held, so only
            // its cancellation could end it).
            #expect((creations[2].start ?? 0) >= (creations[0].end ?? .infinity))
        }
    }

    @Test("le_connect_serial: a device that does not advertise holds no turn; its Connect fails after connect_timeout_ms while the others are served")
    func unheardHoldsNoTurn() async throws {
        // blesim Stale (cached_devices) is in the tree from start-up and never advertises.
        let stale = "C0:FF:EE:00:00:A1"
        try await Sim.with(faults: ["fleet": "2", "le_connect_serial": "1", "connect_latency_ms": "300",
                                    "cached_devices": "1", "connect_timeout_ms": "20000"]) { sim in
            // 20 s: the two Connects below are served long before, loaded machine or not.
            try await Self.discover(sim, 2)
            let simulator = sim.simulator
            let staleConnect = try await offThread {
                try simulator.launch("/usr/bin/dbus-send", ["--system", "--print-reply", "--reply-timeout=30000", "--dest=org.bluez",
                                                            "/org/bluez/hci0/dev_C0_FF_EE_00_00_A1", "org.bluez.Device1.Connect"])
            }
            try #expect(await sim.waitForState { $0.leConnect?.unheard == [stale] }, "the stale device's Connect never pending")
            for i in 1...2 {
                let connect = try await Self.call(sim, i, "Connect")
                #expect(connect.status == 0, "\(connect.stderr)")
            }
            // Both served while the stale device's Connect still waits.
            let during = try await sim.state()
            #expect(during.leConnect?.unheard == [stale])
            #expect(during.leCreations?.filter { $0.result == "connected" }.map(\.address) == [Fleet.address(1), Fleet.address(2)])

            let failed = try await staleConnect.finish(timeout: .seconds(30))
            #expect(failed.status == 1)
            #expect(failed.stderr.contains("org.bluez.Error.Failed: le-connection-abort-by-local"), "\(failed.stderr)")
            let creations = try #require(try await sim.state().leCreations)
            let staleCreation = try #require(creations.first)
            #expect(staleCreation.address == stale && staleCreation.start == nil)
            #expect(staleCreation.result == "le-connection-abort-by-local")
            #expect((staleCreation.end ?? 0) - staleCreation.queued >= 19.995)
            #expect(creations.dropFirst().allSatisfy { ($0.end ?? .infinity) < (staleCreation.end ?? 0) })
        }
    }

    @Test("le_max_links=2: the third link is refused at once, Failed le-connection-abort-by-local; a freed link is taken again")
    func linkCap() async throws {
        try await Sim.with(faults: ["fleet": "3", "le_max_links": "2", "le_connect_serial": "1"]) { sim in
            try await Self.discover(sim, 3)
            for i in 1...2 {
                let connect = try await Self.call(sim, i, "Connect")
                #expect(connect.status == 0, "\(connect.stderr)")
            }
            let refused = try await Self.call(sim, 3, "Connect")
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("org.bluez.Error.Failed: le-connection-abort-by-local"), "\(refused.stderr)")
            let state = try await sim.state()
            #expect(state.leConnect?.links == 2)
            #expect(state.connections.map(\.address).sorted() == [Fleet.address(1), Fleet.address(2)])
            let last = try #require(state.leCreations?.last)
            #expect(last.address == Fleet.address(3) && last.result == "link-limit")
            #expect((last.end ?? .infinity) - (last.start ?? 0) < 0.09, "the controller refuses at once")

            // Disconnect answers once the link is down (disconnect timer): a link is free.
            let disconnect = try await Self.call(sim, 1, "Disconnect")
            #expect(disconnect.status == 0, "\(disconnect.stderr)")
            let again = try await Self.call(sim, 3, "Connect")
            #expect(again.status == 0, "\(again.stderr)")
            let after = try await sim.state()
            #expect(after.connections.map(\.address).sorted() == [Fleet.address(2), Fleet.address(3)])
            #expect(after.leCreations?.map(\.result) == ["connected", "connected", "link-limit", "connected"])
        }
    }

    @Test("a second Connect of a device being connected, or waiting its turn, answers at once Failed 'Operation already in progress'; of a connected one, success without a new connection")
    func secondConnect() async throws {
        // Creations held under way until the test has made its second Connects: no time window.
        try await Sim.with(faults: ["fleet": "2", "le_connect_serial": "1", "le_create_held": "1"]) { sim in
            try await Self.discover(sim, 2)
            let first = try await Self.launch(sim, 1, "Connect")
            try #expect(await sim.waitForState { $0.leConnect?.creating == [Fleet.address(1)] }, "device 1 never creating")
            let busy = try await Self.call(sim, 1, "Connect")
            #expect(busy.status == 1)
            #expect(busy.stderr.contains("org.bluez.Error.Failed: Operation already in progress"), "\(busy.stderr)")

            let second = try await Self.launch(sim, 2, "Connect")
            try #expect(await sim.waitForState { $0.leConnect?.queued == [Fleet.address(2)] }, "device 2 never queued")
            let queuedBusy = try await Self.call(sim, 2, "Connect")
            #expect(queuedBusy.status == 1)
            #expect(queuedBusy.stderr.contains("org.bluez.Error.Failed: Operation already in progress"), "\(queuedBusy.stderr)")
            try await sim.setFault("le_create_held", "0")

            for process in [first, second] {
                let result = try await process.finish(timeout: .seconds(30))
                #expect(result.status == 0, "\(result.stderr)")
            }
            let connected = try await Self.call(sim, 1, "Connect")
            #expect(connected.status == 0, "\(connected.stderr)")
            let state = try await sim.state()
            #expect(state.leCreations?.map(\.address) == [Fleet.address(1), Fleet.address(2)], "no creation for a connected device")
            let outcomes = try await sim.calls().filter { $0.member == "Connect" }.map { "\($0.path.suffix(2)) \($0.outcome)" }
            #expect(outcomes == ["01 reply", "01 error:org.bluez.Error.Failed", "02 reply", "02 error:org.bluez.Error.Failed",
                                 "01 reply"])
        }
    }
}
