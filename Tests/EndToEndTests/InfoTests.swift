// `blectl info` against the simulator: exact records for a cached device, a bonded one
// (connected, with Battery1), a BR/EDR one with a Class, devices found by scanning (one that
// BlueZ drops when discovery ends included); 2 for one never heard; the adapter powered off;
// the text form; SIGINT during the scan.

import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension World {
    static let stale = "C0:FF:EE:00:00:A1"
    static let staleProbe = "C0:FF:EE:00:00:A2"
    static let keys = "C0:FF:EE:00:00:B1"
    static let headset = "C0:FF:EE:00:00:B2"
    static let tile = "4A:C2:7D:11:93:E0"

    /// The keys of info's object and of each devices line, in order.
    static let infoKeys = ["address", "address_type", "name", "alias", "paired", "bonded", "trusted", "blocked", "connected",
                           "services_resolved", "rssi", "tx_power", "appearance", "icon", "class", "modalias", "uuids",
                           "manufacturer_data", "service_data", "decoded", "battery_percentage", "adapter"]

    /// :A2 as the simulator's cached_devices leave it: in the tree, never heard.
    static let staleProbeRecord: J = [
        "address": "C0:FF:EE:00:00:A2", "address_type": "public", "name": "blesim Stale Probe", "alias": "blesim Stale Probe",
        "paired": false, "bonded": false, "trusted": false, "blocked": false, "connected": false, "services_resolved": false,
        "rssi": .null, "tx_power": .null, "appearance": .null, "icon": .null, "class": .null, "modalias": .null,
        "uuids": ["180f"], "manufacturer_data": [:], "service_data": [:], "decoded": [:], "battery_percentage": .null, "adapter": "hci0",
    ]

    /// :B2, the bonded BR/EDR headset: a Class (so no Appearance), blocked, not trusted.
    static let headsetRecord: J = [
        "address": "C0:FF:EE:00:00:B2", "address_type": "public", "name": "blesim Headset", "alias": "blesim Headset",
        "paired": true, "bonded": true, "trusted": false, "blocked": true, "connected": false, "services_resolved": false,
        "rssi": .null, "tx_power": .null, "appearance": .null, "icon": "audio-headset", "class": 0x240404, "modalias": .null,
        "uuids": ["110b", "111e"], "manufacturer_data": [:], "service_data": [:], "decoded": [:], "battery_percentage": .null, "adapter": "hci0",
    ]

    /// :B1, the bonded keyboard, not connected.
    static let keysRecord: J = [
        "address": "C0:FF:EE:00:00:B1", "address_type": "public", "name": "blesim Keys", "alias": "blesim Keys",
        "paired": true, "bonded": true, "trusted": true, "blocked": false, "connected": false, "services_resolved": false,
        "rssi": .null, "tx_power": .null, "appearance": 0x03C1, "icon": "input-keyboard", "class": .null,
        "modalias": "usb:v046Dp4023d0006", "uuids": ["1812", "180f", "180a"], "manufacturer_data": [:], "service_data": [:], "decoded": [:],
        "battery_percentage": .null, "adapter": "hci0",
    ]

    /// :B1 connected (preconnected): services resolved, Battery1 73, UUIDs the resolved set.
    static let connectedKeysRecord: J = [
        "address": "C0:FF:EE:00:00:B1", "address_type": "public", "name": "blesim Keys", "alias": "blesim Keys",
        "paired": true, "bonded": true, "trusted": true, "blocked": false, "connected": true, "services_resolved": true,
        "rssi": .null, "tx_power": .null, "appearance": 0x03C1, "icon": "input-keyboard", "class": .null,
        "modalias": "usb:v046Dp4023d0006", "uuids": ["1801", "180a", "180f", "1812"], "manufacturer_data": [:], "service_data": [:], "decoded": [:],
        "battery_percentage": 73, "adapter": "hci0",
    ]
}

@Suite("blectl info")
struct InfoTests {
    /// Adapter1 method calls the simulator received (discovery started or not).
    static func adapterCalls(_ sim: Sim) async throws -> [String] {
        try await sim.calls().filter { $0.interface == "org.bluez.Adapter1" }.map(\.member)
    }

    @Test("a cached device: its record from BlueZ's objects, keys in order, no scan")
    func cachedDevice() async throws {
        try await Sim.with(faults: ["cached_devices": "1"]) { sim in
            let run = await sim.blectl(["info", World.staleProbe])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == World.staleProbeRecord)
            #expect(topLevelKeys(run.stdout) == World.infoKeys)
            try #expect(await Self.adapterCalls(sim) == [])
        }
    }

    @Test("bonded devices: pairing state, Appearance/Icon/Modalias, Class, Battery1 while connected")
    func bondedDevices() async throws {
        try await Sim.with(faults: ["bonded_devices": "1", "preconnected": World.keys]) { sim in
            let keys = await sim.blectl(["info", World.keys])
            #expect(keys.status == 0, "\(keys)")
            #expect(keys.jsonObject() == World.connectedKeysRecord)
            let headset = await sim.blectl(["info", World.headset, "--timeout", "0"])
            #expect(headset.status == 0, "\(headset)")
            #expect(headset.jsonObject() == World.headsetRecord)
            try #expect(await Self.adapterCalls(sim) == [])
            // Reading is not connecting: the link is as it was.
            try #expect(await sim.state().connections.map(\.address) == [World.keys])
        }
    }

    @Test("unknown to BlueZ: found by scanning, read while heard (RSSI), discovery stopped")
    func foundByScanning() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["info", World.probe, "--timeout", "30"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let record = try #require(run.jsonObject())
            #expect(record.removing("rssi") == [
                "address": "C0:FF:EE:00:00:01", "address_type": "public", "name": "blesim Probe", "alias": "blesim Probe",
                "paired": false, "bonded": false, "trusted": false, "blocked": false, "connected": false, "services_resolved": false,
                "tx_power": 4, "appearance": 0x0540, "icon": .null, "class": .null, "modalias": .null,
                "uuids": ["180f", "180a", .string(World.vendorService)], "manufacturer_data": ["05f1": "0102"], "service_data": [:], "decoded": [:],
                "battery_percentage": .null, "adapter": "hci0",
            ])
            let rssi = try #require(record["rssi"]?.int, "\(record)")
            #expect((-57 ... -53).contains(rssi), "rssi \(rssi)")
            try #expect(await Self.adapterCalls(sim) == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
            try await sim.expectClean()
            try #expect(await sim.state().discovering == false)
        }
    }

    /// BlueZ drops a non-connectable temporary device when discovery ends: the record is
    /// taken while the scan hears it, not looked up afterwards.
    @Test("a temporary advertiser BlueZ drops when discovery ends is still printed")
    func temporaryAdvertiser() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["info", World.tile, "--timeout", "30"])
            #expect(run.status == 0, "\(run)")
            let record = try #require(run.jsonObject())
            #expect(record.removing("rssi") == [
                "address": "4A:C2:7D:11:93:E0", "address_type": "random", "name": "Tile", "alias": "Tile",
                "paired": false, "bonded": false, "trusted": false, "blocked": false, "connected": false, "services_resolved": false,
                "tx_power": .null, "appearance": .null, "icon": .null, "class": .null, "modalias": .null,
                "uuids": ["feed"], "manufacturer_data": [:], "service_data": ["feed": "020031"], "decoded": [:],
                "battery_percentage": .null, "adapter": "hci0",
            ])
            let rssi = try #require(record["rssi"]?.int, "\(record)")
            #expect((-83 ... -79).contains(rssi), "rssi \(rssi)")
            try #expect(await sim.waitForState { !$0.devices.contains(World.tile) }, "the simulator kept the temporary device")
            try await sim.expectClean()
        }
    }

    @Test("never heard: 2, device_not_found, discovery stopped")
    func neverFound() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["info", World.missing, "--timeout", "5"])
            #expect(run.status == 2, "\(run)")
            #expect(run.stdout == "")
            #expect(run.jsonError() == [
                "code": "device_not_found", "exit_status": 2, "retryable": true, "message": "device C0:FF:EE:00:00:99 not found",
                "operation": "device_lookup", "address": "C0:FF:EE:00:00:99", "service": .null, "characteristic": .null,
                "dbus_error": .null,
            ])
            try #expect(await Self.adapterCalls(sim) == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
            try await sim.expectClean()
        }
    }

    @Test("--timeout 0: a known device is printed, an unknown one is 2 without a scan")
    func zeroTimeout() async throws {
        try await Sim.with(faults: ["cached_devices": "1"]) { sim in
            let known = await sim.blectl(["info", World.staleProbe, "--timeout", "0"])
            #expect(known.status == 0, "\(known)")
            #expect(known.jsonObject() == World.staleProbeRecord)
            let unknown = await sim.blectl(["info", World.probe, "--timeout", "0"])
            #expect(unknown.status == 2, "\(unknown)")
            #expect(unknown.jsonError()?["code"] == "device_not_found")
            try #expect(await Self.adapterCalls(sim) == [])
        }
    }

    @Test("adapter powered off: a known device is printed from BlueZ's objects; an unknown one is 69, no scan")
    func adapterPoweredOff() async throws {
        try await Sim.with(faults: ["cached_devices": "1", "adapter_powered_off": "1"]) { sim in
            let known = await sim.blectl(["info", World.staleProbe])
            #expect(known.status == 0, "\(known)")
            #expect(known.jsonObject() == World.staleProbeRecord)
            let unknown = await sim.blectl(["info", World.probe])
            #expect(unknown.status == 69, "\(unknown)")
            #expect(unknown.stdout == "")
            #expect(unknown.jsonError() == [
                "code": "unavailable", "exit_status": 69, "retryable": false, "message": "Bluetooth adapter hci0 is powered off",
                "operation": "adapter", "address": "C0:FF:EE:00:00:01", "service": .null, "characteristic": .null, "dbus_error": .null,
            ])
            try #expect(await Self.adapterCalls(sim) == [])
        }
    }

    @Test("--adapter names a powered-off adapter: its devices only; no scan on it (69)")
    func namedPoweredOffAdapter() async throws {
        try await Sim.with(faults: ["second_adapter": "1", "cached_devices": "1"]) { sim in
            // :A2 is under hci0, not hci1: unknown there, and hci1 cannot scan.
            let run = await sim.blectl(["--adapter", "hci1", "info", World.staleProbe])
            #expect(run.status == 69, "\(run)")
            #expect(run.jsonError()?["message"] == "Bluetooth adapter hci1 is powered off")
            let missing = await sim.blectl(["--adapter", "hci2", "info", World.staleProbe])
            #expect(missing.status == 69, "\(missing)")
            #expect(missing.jsonError()?["message"] == "Bluetooth adapter hci2 not found")
            try #expect(await Self.adapterCalls(sim) == [])
        }
    }

    @Test("--format text: one key: value line per JSON field")
    func textForm() async throws {
        try await Sim.with(faults: ["bonded_devices": "1"]) { sim in
            let run = await sim.blectl(["info", World.headset, "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines == [
                "address:            C0:FF:EE:00:00:B2",
                "address_type:       public",
                "name:               blesim Headset",
                "alias:              blesim Headset",
                "paired:             yes",
                "bonded:             yes",
                "trusted:            no",
                "blocked:            yes",
                "connected:          no",
                "services_resolved:  no",
                "rssi:               -",
                "tx_power:           -",
                "appearance:         -",
                "icon:               audio-headset",
                "class:              0x240404",
                "modalias:           -",
                "uuids:              110b, 111e",
                "manufacturer_data:  -",
                "service_data:       -",
                "decoded:            -",
                "battery_percentage: -",
                "adapter:            hci0",
            ])
            // Every JSON field has its line.
            #expect(run.lines.map { String($0.prefix { $0 != ":" }) } == World.infoKeys)
        }
    }

    @Test("SIGINT while scanning for an unknown device: 130, discovery stopped, nothing printed", arguments: [SIGINT, SIGTERM])
    func signalDuringScan(_ signal: Int32) async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["info", World.missing, "--timeout", "20"])
            try #expect(await sim.waitForState { $0.discoverySessions.count == 1 }, "no discovery started")
            process.sendSignal(signal)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: signal, sim: sim)
            #expect(result.stdout == "")
            try #expect(await Self.adapterCalls(sim) == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
            try #expect(await sim.state().discovering == false)
        }
    }
}
