// An adapter still powering on (bluetoothd just started with AutoEnable: Powered false,
// PowerState "off-enabling", BlueZ >= 5.64 or 5.66 with --experimental) is waited for within
// --timeout; one that is off ("off", or "off-blocked" by rfkill: ErrorStatusTests) fails at
// once. Without PowerState (5.66 without --experimental) an adapter that is off may be
// powering on: it is waited for a short grace (3 s), then fails as powered off.

import Foundation
import SimulatorHarness
import Testing

@Suite("adapter powering on")
struct AdapterPowerTests {
    @Test("get-battery waits for an adapter powering on, then answers", arguments: [true, false])
    func waitsForPowerOn(experimental: Bool) async throws {
        try await Sim.with(faults: ["adapter_powering_on_ms": "700", "experimental": String(experimental)]) { sim in
            let run = await sim.blectl(["get-battery", World.probe, "--timeout", "20"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == #"{"address":"C0:FF:EE:00:00:01","percentage":87,"source":"battery1"}"# + "\n")
            #expect(run.stderr == "")
            try #expect(await sim.state().powered == true)
            try await sim.expectClean()
        }
    }

    @Test("scan waits for an adapter powering on, then lists the advertisers")
    func scanWaitsForPowerOn() async throws {
        try await Sim.with(faults: ["adapter_powering_on_ms": "500"]) { sim in
            let run = await sim.blectl(["scan", "--count", "10", "--timeout", "60"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let addresses = Set(run.jsonLines().compactMap { $0["address"]?.string })
            #expect(addresses == Set(World.known + World.fillers))
            try await sim.expectClean()
        }
    }

    @Test("still powering on (PowerState off-enabling) at the timeout: 124 in the adapter stage, nothing sent to the adapter")
    func poweringOnPastTheTimeout() async throws {
        try await Sim.with(faults: ["adapter_powering_on_ms": "600000", "experimental": "true"]) { sim in
            let run = await sim.blectl(["connect", World.probe, "--timeout", "5"])
            #expect(run.status == 124, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error == J.object([
                "code": "timed_out", "exit_status": 124, "retryable": false,
                "message": "timed out waiting for the adapter to power on",
                "operation": "adapter", "address": .string(World.probe), "service": .null, "characteristic": .null,
                "dbus_error": .null,
            ]))
            let members = try await sim.calls().map(\.member)
            #expect(!members.contains("Connect") && !members.contains("StartDiscovery") && !members.contains("SetDiscoveryFilter"),
                    "\(members)")
        }
    }
}

extension AdapterPowerTests {
    @Test("no PowerState (5.66): scan --timeout 4 as bluetoothd powers the adapter 1.5 s later lists the devices")
    func scanAsTheAdapterPowersOnWithoutPowerState() async throws {
        try await Sim.with(faults: ["adapter_powering_on_ms": "1500"]) { sim in
            let run = await sim.blectl(["scan", "--timeout", "4"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let addresses = Set(run.jsonLines().compactMap { $0["address"]?.string })
            #expect(addresses == Set(World.known + World.fillers), "\(run)")
            try await sim.expectClean()
        }
    }

    @Test("no PowerState (5.66), the adapter stays off: 69 powered off after the short grace, not the whole timeout")
    func offWithoutPowerStateFailsAfterTheGrace() async throws {
        try await Sim.with(faults: ["adapter_powered_off": "true"]) { sim in
            let started = Date()
            let run = await sim.blectl(["get-battery", World.probe, "--timeout", "60"])
            #expect(run.status == 69, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "unavailable" && error["operation"] == "adapter", "\(run)")
            // The grace is 3 s; the timeout 60 s.
            #expect(Date().timeIntervalSince(started) < 40, "\(run)")
            let members = try await sim.calls().map(\.member)
            #expect(!members.contains("Connect") && !members.contains("StartDiscovery"), "\(members)")
        }
    }
}

@Suite("a Connect that never brought the link up")
struct NeverConnectedTests {
    @Test("the device object removed under two Connects: found again, the third connects")
    func removedTwiceThenConnects() async throws {
        try await Sim.with(faults: ["remove_device_during_connect_times": "2"]) { sim in
            let run = await sim.blectl(["get-battery", World.probe])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == #"{"address":"C0:FF:EE:00:00:01","percentage":87,"source":"battery1"}"# + "\n")
            #expect(run.stderr == "")
            try #expect(await sim.calls().filter { $0.member == "Connect" }.count == 3)
            try await sim.expectClean()
        }
    }
}
