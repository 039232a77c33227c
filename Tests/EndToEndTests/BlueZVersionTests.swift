// What differs between the bluetoothd versions blectl's users run, on each of the simulator's
// profiles (sim/bluezsim/profiles.py): Adapter1's controller facts and PowerState, the BlueZ
// version doctor reads from the Modalias, the GAP service 5.82 exports, and a discovery
// filter with UUIDs (which crashes 5.87). Only what depends on the version runs on each.

import Foundation
import SimulatorHarness
import Testing

@Suite("BlueZ versions: the simulator's profiles")
struct BlueZVersionTests {
    static let versions = Simulator.bluezVersions
    /// Whether bluetoothd `version` has 5.82's Adapter1 (PowerState without --experimental,
    /// Connectable, Manufacturer, Version) and exports the GAP service.
    static func newer(_ version: String) -> Bool { version != "5.66" }

    @Test("adapters: PowerState and the controller's facts where bluetoothd has them, null where not", arguments: versions)
    func adapters(version: String) async throws {
        try await Sim.with(bluez: version) { sim in
            let run = await sim.blectl(["adapters"])
            #expect(run.status == 0 && run.stderr == "", "\(run)")
            let newer = Self.newer(version)
            #expect(run.jsonLines() == [[
                "name": "hci0", "address": "00:1A:7D:DA:71:13", "alias": "blesim-host", "powered": true,
                "power_state": newer ? "on" : .null, "discovering": false, "pairable": true, "discoverable": false,
                "roles": ["central", "peripheral"], "connectable": newer ? true : .null, "manufacturer": newer ? 2 : .null,
                "manufacturer_name": newer ? "Intel Corp." : .null, "version": newer ? 11 : .null, "version_name": newer ? "5.2" : .null,
                // Only where the kernel reports experimental features enabled: none on the rigs.
                "experimental_features": .null,
            ]], "\(run)")
        }
    }

    @Test("doctor: the BlueZ version, the controller, PowerState", arguments: versions)
    func doctor(version: String) async throws {
        try await Sim.with(bluez: version) { sim in
            let run = await sim.blectl(["doctor"])
            #expect(run.status == 0, "\(run)")
            let checks = DoctorTests.checks(run)
            try #require(checks.count == 8, "\(run)")
            #expect(checks[1].2.hasSuffix("; BlueZ \(version)"), "\(checks)")
            #expect(checks[3].2 == (Self.newer(version) ? "hci0 (00:1A:7D:DA:71:13; Bluetooth 5.2, Intel Corp. (0x0002))" : "hci0 (00:1A:7D:DA:71:13)"))
            #expect(checks[5].2 == (Self.newer(version) ? "hci0 is powered (PowerState on)" : "hci0 is powered"))
        }
    }

    @Test("GAP: 5.82 and later export Generic Access (connect lists it, 2a00 reads the name); 5.66 hides it", arguments: versions)
    func genericAccess(version: String) async throws {
        try await Sim.with(bluez: version) { sim in
            let connect = await sim.blectl(["connect", World.plain])
            #expect(connect.status == 0, "\(connect)")
            let services = connect.jsonObject()?["services"]?.array?.compactMap { $0["uuid"]?.string } ?? []
            #expect(services == (Self.newer(version) ? ["1800", "1801"] : ["1801"]), "\(connect)")
            let read = await sim.blectl(["read", World.plain, "2a00"])
            if Self.newer(version) {
                #expect(read.status == 0 && read.jsonObject()?["text"] == "blesim Plain", "\(read)")
            } else {
                #expect(read.status == 3 && read.jsonError()?["code"] == "not_supported", "\(read)")
            }
            try await sim.expectClean()
        }
    }

    @Test("scan --service 180f lists the battery devices and bluetoothd keeps running (5.87 crashes on a UUIDs filter)", arguments: versions)
    func serviceScan(version: String) async throws {
        try await Sim.with(bluez: version) { sim in
            let run = await sim.blectl(["scan", "--service", "180f", "--timeout", "3"])
            #expect(run.status == 0 && run.stderr == "", "\(run)")
            #expect(Set(run.jsonLines().compactMap { $0["address"]?.string }) == [World.probe, World.gattBattery], "\(run)")
            let state = try await sim.state()
            #expect(state.bluezRunning && state.bluez == version)
            try await sim.expectClean()
        }
    }

    @Test("no PowerState on 5.66, off-enabling on later ones: scan --timeout 4 as the adapter powers on 1.5 s later lists the devices",
          arguments: versions)
    func scanAsTheAdapterPowersOn(version: String) async throws {
        try await Sim.with(faults: ["adapter_powering_on_ms": "1500"], bluez: version) { sim in
            let run = await sim.blectl(["scan", "--timeout", "4"])
            #expect(run.status == 0 && run.stderr == "", "\(run)")
            #expect(Set(run.jsonLines().compactMap { $0["address"]?.string }) == Set(World.known + World.fillers), "\(run)")
            try await sim.expectClean()
        }
    }
}
