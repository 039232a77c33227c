// blectl advertise against the simulator's LEAdvertisingManager1 (sim/README.md, "The other
// side of the link"): the bytes on air, the events of the simulated central, the
// advertisement unregistered on every way out (timeout, SIGINT, SIGTERM) as bluetoothd's
// state and call log show, data that does not fit refused before anything is registered,
// bluetoothd's Release, an impostor calling blectl's object, bluetoothd leaving.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("advertise")
struct AdvertiseTests {
    static let central = "C0:FF:EE:00:CE:01"
    static let path = "/org/blectl/advertisement1"
    /// Every field: 16-bit UUID, manufacturer data, service data, Appearance, TX Power; the name.
    static let everyField = ["advertise", "--name", "blectl", "--service", "180f", "--manufacturer-data", "ffff:0102",
                             "--service-data", "180f:64", "--tx-power", "--appearance", "0x03c1"]

    /// The lines of a run without their `time`.
    static func events(_ stdout: String) -> [J] {
        Run(arguments: [], status: 0, stdout: stdout, stderr: "").jsonLines().map { $0.removing("time") }
    }

    /// The advertisement registered, once there is one.
    static func registered(_ sim: Sim) async throws -> SimAdvertisement? {
        _ = try await sim.waitForState { !($0.advertisements ?? []).isEmpty }
        return try await sim.state().advertisements?.first
    }

    /// The LEAdvertisingManager1 calls the simulator received, each "Member outcome".
    static func managerCalls(_ sim: Sim) async throws -> [String] {
        try await sim.calls().filter { $0.interface == "org.bluez.LEAdvertisingManager1" }.map { "\($0.member) \($0.outcome)" }
    }

    static let registeredLine: J = [
        "event": "registered", "adapter": "hci0", "path": "/org/blectl/advertisement1", "type": "peripheral", "name": "blectl",
        "services": ["180f"], "manufacturer_data": ["ffff": "0102"], "service_data": ["180f": "64"], "appearance": 961,
        "tx_power": true, "discoverable": false, "adv_data_bytes": 22, "scan_response_bytes": 8,
    ]

    /// The simulated central connects, then disconnects; blectl's events say each.
    static func centralComesAndGoes(_ sim: Sim, _ process: RunningProcess,
                                    sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await sim.simulator.centralConnect()
        #expect(await process.stdoutContains("\"connected\""), sourceLocation: sourceLocation)
        try await sim.simulator.centralDisconnect()
        #expect(await process.stdoutContains("\"disconnected\""), sourceLocation: sourceLocation)
    }

    @Test("on air byte for byte as bluetoothd 5.66 lays it out; read back by bluetoothd only; the registered line")
    func onAir() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(Self.everyField + ["--timeout", "60"])
            let ad = try #require(try await Self.registered(sim))
            // 03 03 0f18 | 05 ff ffff 0102 | 04 16 0f18 64 | 03 19 c103 | 02 0a 00 (TX Power, 0 dBm)
            #expect(ad.advData == "03030f18" + "05ffffff0102" + "04160f1864" + "0319c103" + "020a00")
            #expect(ad.scanResponse == "0709626c6563746c")
            #expect(ad.path == Self.path && ad.type == "peripheral" && ad.localName == "blectl" && ad.includes == ["tx-power"])
            #expect(ad.appearance == 0x03C1)
            #expect(await process.stdoutContains("\"registered\""))
            let reads = try await sim.state().appCalls ?? []
            #expect(reads.map { "\($0.member) \($0.outcome)" } == ["GetManagedObjects reply:{1 entries}", "GetAll reply:{7 entries}"])
            process.sendSignal(SIGTERM)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGTERM, sim: sim)
            #expect(Self.events(result.stdout) == [Self.registeredLine])
            try #expect(await Self.managerCalls(sim) == ["RegisterAdvertisement reply", "UnregisterAdvertisement reply"])
        }
    }

    @Test("--timeout: advertised until then, exit 0, unregistered")
    func timeout() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(Self.everyField + ["--timeout", "3"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(Self.events(run.stdout) == [Self.registeredLine])
            try #expect(await Self.managerCalls(sim) == ["RegisterAdvertisement reply", "UnregisterAdvertisement reply"])
            try await sim.expectClean()
        }
    }

    @Test("interrupted: 130/143, UnregisterAdvertisement sent, nothing registered", arguments: [SIGINT, SIGTERM])
    func interrupted(_ signal: Int32) async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["advertise", "--name", "blectl"])
            #expect(try await Self.registered(sim) != nil, "\(process.currentStderr)")
            #expect(await process.stdoutContains("\"registered\""))
            process.sendSignal(signal)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: signal, sim: sim)
            try #expect(await Self.managerCalls(sim) == ["RegisterAdvertisement reply", "UnregisterAdvertisement reply"])
            try #expect(await sim.state().advertisements == [])
        }
    }

    @Test("the central connects and disconnects: connected and disconnected with its address")
    func central() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["advertise", "--name", "blectl", "--timeout", "60"])
            #expect(try await Self.registered(sim) != nil, "\(process.currentStderr)")
            try await Self.centralComesAndGoes(sim, process)
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            let events = Self.events(result.stdout)
            #expect(events.dropFirst() == [["event": "connected", "address": "C0:FF:EE:00:CE:01"],
                                           ["event": "disconnected", "address": "C0:FF:EE:00:CE:01"]], "\(result.stdout)")
            #expect(events.first?["event"] == "registered")
        }
    }

    @Test("text format: one line per event, key: value")
    func text() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["advertise", "--name", "blectl", "--format", "text", "--timeout", "3"])
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.lines.first)
            #expect(line.hasPrefix("event: registered  time: "), "\(run)")
            #expect(line.hasSuffix("adapter: hci0  path: /org/blectl/advertisement1  type: peripheral  name: blectl  services: -  "
                                   + "manufacturer_data: -  service_data: -  appearance: -  tx_power: false  discoverable: false  "
                                   + "adv_data_bytes: 0  scan_response_bytes: 8"), "\(run)")
        }
    }

    @Test("data over 31 bytes: 64 naming the option, before anything is sent", arguments: [
        (["--manufacturer-data", "ffff:" + String(repeating: "ab", count: 28)],
         "--manufacturer-data 0xffff does not fit: it takes 32 bytes, and the advertising data would take 32 of 31"),
        (["--service", "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b", "--service", "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"],
         "--service 128-bit does not fit: it takes 34 bytes, and the advertising data would take 34 of 31"),
        (["--manufacturer-data", "004c:" + String(repeating: "00", count: 25), "--tx-power"],
         "--tx-power does not fit: it takes 3 bytes, and the advertising data would take 32 of 31"),
        (["--name", String(repeating: "n", count: 30)],
         "--name does not fit: it takes 32 bytes, and the scan response holds 31 (at most 29 bytes of UTF-8; bluetoothd would shorten it)"),
        (["--type", "broadcast", "--discoverable"],
         "--discoverable refused: a broadcast advertisement cannot carry Flags (use a peripheral one)"),
    ])
    func tooLarge(_ options: [String], _ message: String) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["advertise"] + options)
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr.hasPrefix("Error: \(message)\n"), "\(run)")
            try #expect(await sim.calls().isEmpty, "nothing sent to bluetoothd")
        }
    }

    @Test("fits only while the adapter is not discoverable: refused at run time (64, does_not_fit), nothing registered")
    func discoverableAdapter() async throws {
        try await Sim.with { sim in
            let set = await sim.simulator.run("/usr/bin/dbus-send", ["--system", "--print-reply", "--dest=org.bluez", "/org/bluez/hci0",
                                                                     "org.freedesktop.DBus.Properties.Set", "string:org.bluez.Adapter1",
                                                                     "string:Discoverable", "variant:boolean:true"])
            #expect(set.status == 0, "\(set)")
            let run = await sim.blectl(["advertise", "--manufacturer-data", "004c:" + String(repeating: "00", count: 26)])
            #expect(run.status == 64, "\(run)")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "does_not_fit" && error["operation"] == "advertise" && error["exit_status"] == 64)
            #expect(error["message"]?.string == "advertisement refused before it was sent: ManufacturerData 0x004c does not fit: "
                                                + "it takes 30 bytes, and the advertising data would take 33 of 31")
            try #expect(await Self.managerCalls(sim) == [])
            try await sim.expectClean()
        }
    }

    @Test("no free advertising instance: 5 (busy) before RegisterAdvertisement")
    func noInstance() async throws {
        try await Sim.with(faults: ["adv_instances": "0"]) { sim in
            let run = await sim.blectl(["advertise", "--name", "blectl"])
            #expect(run.status == 5, "\(run)")
            #expect(run.jsonError()?["code"] == "busy")
            try #expect(await Self.managerCalls(sim) == [])
        }
    }

    @Test("bluetoothd releases it: the released line, exit 1 (released), no UnregisterAdvertisement")
    func released() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["advertise", "--name", "blectl", "--timeout", "60"])
            #expect(try await Self.registered(sim) != nil, "\(process.currentStderr)")
            #expect(await process.stdoutContains("\"registered\""))
            try await sim.simulator.releaseAdvertisement(Self.path)
            let result = try await process.finish()
            let run = Run(arguments: [], result: result)
            #expect(run.status == 1, "\(run)")
            #expect(Self.events(run.stdout).map { $0["event"] } == ["registered", "released"])
            let error = try #require(run.jsonError())
            #expect(error["code"] == "released" && error["operation"] == "advertise" && error["exit_status"] == 1, "\(error)")
            try #expect(await Self.managerCalls(sim) == ["RegisterAdvertisement reply"])
            let release = try await sim.state().appCalls?.last
            #expect(release?.member == "Release" && release?.outcome == "sent")
            try await sim.expectClean()
        }
    }

    @Test("an impostor calling blectl's object gets AccessDenied; blectl goes on advertising")
    func impostor() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["advertise", "--name", "blectl", "--timeout", "60"])
            let ad = try #require(try await Self.registered(sim), "\(process.currentStderr)")
            let calls: [[String]] = [
                ["org.freedesktop.DBus.Properties.GetAll", "string:org.bluez.LEAdvertisement1"],
                ["org.freedesktop.DBus.Properties.Get", "string:org.bluez.LEAdvertisement1", "string:LocalName"],
                ["org.freedesktop.DBus.ObjectManager.GetManagedObjects"],
                ["org.bluez.LEAdvertisement1.Release"],
            ]
            for call in calls {
                let r = await sim.simulator.run("/usr/bin/dbus-send", ["--system", "--print-reply", "--dest=\(ad.client)", Self.path] + call)
                #expect(r.status != 0 && r.stderr.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(call): \(r)")
            }
            // Still registered and connectable: the central connects.
            try #expect(await sim.state().advertisements?.map(\.path) == [Self.path])
            // The central's link is its own to end (blectl leaves it up).
            try await Self.centralComesAndGoes(sim, process)
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            #expect(Self.events(result.stdout).map { $0["event"] } == ["registered", "connected", "disconnected"])
            try #expect(await Self.managerCalls(sim) == ["RegisterAdvertisement reply", "UnregisterAdvertisement reply"])
        }
    }

    @Test("bluetoothd leaves: 69 (after the released line when it stops, without when it crashes)",
          arguments: [("bluez_stop_on", ["registered", "released"]), ("bluez_exit_on", ["registered"])] as [(String, [J])])
    func bluetoothdLeaves(_ fault: String, _ lines: [J]) async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["advertise", "--name", "blectl", "--timeout", "60"])
            #expect(try await Self.registered(sim) != nil, "\(process.currentStderr)")
            #expect(await process.stdoutContains("\"registered\""))
            try await sim.setFault(fault, "Introspect")
            _ = await sim.simulator.run("/usr/bin/dbus-send", ["--system", "--print-reply", "--reply-timeout=5000", "--dest=org.bluez",
                                                               "/", "org.freedesktop.DBus.Introspectable.Introspect"])
            let run = Run(arguments: [], result: try await process.finish())
            #expect(run.status == 69, "\(run)")
            #expect(Self.events(run.stdout).map { $0["event"] ?? .null } == lines, "\(run)")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "unavailable" && error["operation"] == "advertise", "\(error)")
            #expect(error["message"] == "bluetoothd left the system bus during advertising", "\(error)")
            try #expect(await Self.managerCalls(sim) == ["RegisterAdvertisement reply"])
        }
    }
}
