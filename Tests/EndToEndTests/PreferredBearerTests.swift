// Device1.PreferredBearer (BlueZ 5.80+, only with bluetoothd --experimental, dual-mode
// devices only): blectl never sets it (bluetoothd stores it, and "le" puts the device on the
// kernel's auto-connect list for good); where the user set it to "le", Connect goes over LE
// with no LE sighting first. Elsewhere the old way (an LE sighting first, a retry after a
// BR/EDR failure), and the failure's message says what PreferredBearer would do and where
// bluetoothd offers it. The device: fault dual_mode_device "bredr-flag", which bluetoothd
// otherwise always connects over BR/EDR (OddDeviceTests).

import SimulatorHarness
import Testing

@Suite("dual-mode devices and Device1.PreferredBearer")
struct PreferredBearerTests {
    /// Properties.Set of PreferredBearer, as a user's bluetoothctl or busctl would.
    static func setPreferredBearer(_ sim: Sim, _ value: String) -> String {
        let r = sim.simulator.run("dbus-send", ["--bus=\(sim.simulator.address)", "--dest=org.bluez", "--print-reply",
                                                OddWorld.dualPath, "org.freedesktop.DBus.Properties.Set",
                                                "string:org.bluez.Device1", "string:PreferredBearer", "variant:string:\(value)"],
                                  environment: [:], timeout: .seconds(10))
        return "\(r.status) \(r.stderr)"
    }

    static func preferredBearer(_ sim: Sim) -> String {
        sim.simulator.run("dbus-send", ["--bus=\(sim.simulator.address)", "--dest=org.bluez", "--print-reply=literal",
                                        OddWorld.dualPath, "org.freedesktop.DBus.Properties.Get",
                                        "string:org.bluez.Device1", "string:PreferredBearer"],
                          environment: [:], timeout: .seconds(10)).stdout
    }

    @Test("5.82 with --experimental, PreferredBearer set to 'le' by the user: over LE at once, blectl sets nothing")
    func preferredBearerSetByTheUser() async throws {
        try await Sim.with(faults: ["dual_mode_device": "bredr-flag", "experimental": "true"], bluez: "5.82") { sim in
            #expect(Self.setPreferredBearer(sim, "le").hasPrefix("0 "))
            let before = try await sim.calls().count
            let r = await sim.blectl(["get-version", OddWorld.dual, "--timeout", "30"])
            #expect(r.status == 0, "\(r)")
            #expect(r.jsonObject() == OddWorld.dualVersion, "\(r.stdout)")
            #expect(try await sim.state().connects == [OddWorld.le])
            let calls = Array(try await sim.calls().dropFirst(before))
            #expect(calls.oddIndices("Set").isEmpty, "\(calls.scenarioMembers)")
            let connects = calls.oddIndices("Connect")
            try #require(connects.count == 1, "\(calls.scenarioMembers)")
            // No LE-only discovery was needed before the Connect.
            #expect(!calls.oddLEDiscovery(between: -1, and: connects[0]), "\(calls.scenarioMembers)")
            #expect(Self.preferredBearer(sim).contains("le"))
            try await sim.scenarioExpectClean()
        }
    }

    @Test("5.82 with --experimental, PreferredBearer left as found: blectl does not set it (the old way), and it stays 'last-seen'")
    func preferredBearerNotSet() async throws {
        try await Sim.with(faults: ["dual_mode_device": "bredr-flag", "experimental": "true"], bluez: "5.82") { sim in
            let r = await sim.blectl(["get-version", OddWorld.dual, "--timeout", "30"])
            #expect(r.status == 1, "\(r)")
            #expect(try await sim.calls().oddIndices("Set").isEmpty)
            #expect(Self.preferredBearer(sim).contains("last-seen"))
            try await sim.scenarioExpectClean()
        }
    }

    @Test("5.82 without --experimental: no PreferredBearer, the old way; the failure says what it would do and where it exists")
    func noPreferredBearer() async throws {
        try await Sim.with(faults: ["dual_mode_device": "bredr-flag"], bluez: "5.82") { sim in
            let r = await sim.blectl(["get-version", OddWorld.dual, "--timeout", "30"])
            #expect(r.status == 1, "\(r)")
            scenarioExpectError(r, scenarioError("bluez_failed", 1, operation: "connect", address: OddWorld.dual,
                                                 dbusError: "org.bluez.Error.NotAvailable"),
                                mentions: ["over BR/EDR, not LE", "where bluetoothd offers Device1.PreferredBearer", "--experimental", "auto-connect"])
            #expect(try await sim.state().connects == [OddWorld.bredr, OddWorld.bredr])
            #expect(try await sim.calls().oddIndices("Set").isEmpty)
            try await sim.scenarioExpectClean()
        }
    }
}
