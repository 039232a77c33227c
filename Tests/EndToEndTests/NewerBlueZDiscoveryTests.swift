// blectl on a bluetoothd like 5.87's on an LE-only adapter: a filter of only Transport le
// and DuplicateData false is an unfiltered discovery there (5.67 and later), which drops
// devices that do not advertise as discoverable, and a discovery filter with UUIDs crashes
// bluetoothd (bluez#2282). The simulator's faults model both (BlueZKitTests'
// FilteredDiscoveryTests show they bite a client that asks as blectl did).

import SimulatorHarness
import Testing

@Suite("discovery on bluetoothd 5.87: FilterDiscoverable and the UUIDs filter crash")
struct NewerBlueZDiscoveryTests {
    static let hidden = "C0:FF:EE:00:00:0A"
    /// bluetoothd 5.87 on an LE-only adapter, with a connectable sensor that advertises
    /// without the discoverable flags.
    static let faults = ["le_only_adapter": "true", "empty_filter_is_regular": "true", "uuid_filter_crash": "true",
                         "hidden_device": "true"]

    @Test("scan --service 180f: bluetoothd keeps running, the devices advertising 180f are listed")
    func serviceFilterDoesNotCrashBluetoothd() async throws {
        try await Sim.with(faults: Self.faults) { sim in
            let run = await sim.blectl(["scan", "--service", "180f", "--timeout", "3"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let addresses = run.jsonLines().compactMap { $0["address"]?.string }
            #expect(Set(addresses) == [World.probe, World.gattBattery, Self.hidden], "\(addresses)")
            #expect(addresses.count == 3, "each device once: \(addresses)")
            try #expect(await sim.state().bluezRunning)
            let filters = try await sim.calls().filter { $0.member == "SetDiscoveryFilter" }.compactMap(\.filter)
            #expect(filters.count == 1 && filters.first?["UUIDs"] == nil && filters.first?["RSSI"] == .number(-127), "\(filters)")
            try await sim.expectClean()
        }
    }

    @Test("get-battery by address finds a device that does not advertise as discoverable")
    func batteryOfAHiddenDevice() async throws {
        try await Sim.with(faults: Self.faults) { sim in
            let run = await sim.blectl(["get-battery", Self.hidden, "--timeout", "20"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == #"{"address":"C0:FF:EE:00:00:0A","percentage":66,"source":"gatt"}"# + "\n")
            #expect(run.stderr == "")
            try await sim.expectClean()
        }
    }

    @Test("scan lists the devices that do not advertise as discoverable too")
    func scanListsEveryAdvertiser() async throws {
        try await Sim.with(faults: Self.faults) { sim in
            let run = await sim.blectl(["scan", "--count", "11", "--timeout", "10"])
            #expect(run.status == 0, "\(run)")
            let addresses = Set(run.jsonLines().compactMap { $0["address"]?.string })
            #expect(addresses == Set(World.known + World.fillers + [Self.hidden]), "\(addresses)")
            try await sim.expectClean()
        }
    }
}

extension NewerBlueZDiscoveryTests {
    @Test("--service matches Device1.UUIDs: after a connection, the services found by connecting too")
    func serviceMatchesResolvedServices() async throws {
        try await Sim.with { sim in
            // blesim Plain advertises no service UUID; connecting resolves 0x1800 and 0x1801.
            let before = await sim.blectl(["scan", "--service", "1801", "--timeout", "2"])
            #expect(before.status == 0 && before.stdout == "", "\(before)")
            let connect = await sim.blectl(["connect", World.plain])
            #expect(connect.status == 0, "\(connect)")
            let after = await sim.blectl(["scan", "--service", "1801", "--timeout", "2"])
            #expect(after.status == 0, "\(after)")
            #expect(after.jsonLines().compactMap { $0["address"]?.string } == [World.plain], "\(after)")
            try await sim.expectClean()
        }
    }
}
