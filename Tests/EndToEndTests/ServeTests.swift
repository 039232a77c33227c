// blectl serve against the simulator's GattManager1 and its simulated central (sim/README.md,
// "The other side of the link"): a profile served and advertised, the central's reads,
// writes and subscriptions as events, values from standard input and from the profile's
// schedule notified, everything unregistered on every way out, a profile that cannot be
// served refused at its line and member before anything is registered, an impostor refused.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("serve")
struct ServeTests {
    static let central = "C0:FF:EE:00:CE:01"
    static let custom = "5e770001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let greeting = "5e770002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let app = "/org/blectl/application1"
    /// Heart Rate (1800 left to bluetoothd), a custom service with a writable greeting.
    static let profile = """
        {
          "name": "blectl Heart",
          "services": [
            {"uuid": "1800", "characteristics": [{"uuid": "2a00", "flags": ["read"], "value": "41"}]},
            {"uuid": "180d", "characteristics": [
              {"uuid": "2a37", "flags": ["notify"], "value": "0048"},
              {"uuid": "2a38", "flags": ["read"], "value": "01",
               "descriptors": [{"uuid": "2902", "value": "0000"}, {"uuid": "2901", "value": "6368657374"}]}
            ]},
            {"uuid": "\(custom)", "characteristics": [
              {"uuid": "\(greeting)", "flags": ["read", "write"], "value": "68656c6c6f"}
            ]}
          ]
        }
        """
    static let registered: J = [
        "event": "registered", "adapter": "hci0", "path": .string(app), "services": ["180d", .string(custom)],
        "characteristics": 3, "advertising": true, "name": "blectl Heart", "advertised_services": ["180d", .string(custom)],
        "skipped": [["line": 4, "field": "services[0]", "uuid": "1800", "reason": "bluetoothd serves 1800 itself"],
                    ["line": 8, "field": "services[1].characteristics[1].descriptors[0]", "uuid": "2902", "reason": "bluetoothd makes 2902 itself"]],
        "unread": [],
    ]

    /// `text` in a file of its own, for as long as the test runs.
    static func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-profile-\(UUID().uuidString).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func events(_ stdout: String) -> [J] { AdvertiseTests.events(stdout) }

    /// The GattManager1 calls the simulator received, each "Member outcome".
    static func managerCalls(_ sim: Sim) async throws -> [String] {
        try await sim.calls().filter { $0.interface == "org.bluez.GattManager1" }.map { "\($0.member) \($0.outcome)" }
    }

    /// Serves `profile` with `arguments`, once registered (and connectable).
    static func launch(_ sim: Sim, profile: String = profile, _ arguments: [String] = ["--timeout", "60"],
                       stdinPipe: Bool = false) async throws -> RunningProcess {
        let process = try await sim.launch(["serve", try file(profile)] + arguments, stdinPipe: stdinPipe)
        #expect(await process.stdoutContains("\"registered\""), "\(process.currentStderr)")
        return process
    }

    @Test("--timeout: registered, then 0 at the timeout, everything unregistered")
    func timeout() async throws {
        try await Sim.with { sim in
            let process = try await Self.launch(sim, ["--timeout", "1"])
            let result = try await process.finish(timeout: .seconds(30))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.events(result.stdout) == [Self.registered])
            try await sim.expectClean()
            try #expect(await Self.managerCalls(sim) == ["RegisterApplication reply", "UnregisterApplication reply"])
        }
    }

    @Test("the central reads, writes and subscribes: each an event with its address; SIGINT: 130, everything unregistered")
    func centralSession() async throws {
        try await Sim.with { sim in
            let process = try await Self.launch(sim)
            try #expect(await sim.state().advertisements?.first?.localName == "blectl Heart")
            try await sim.simulator.centralConnect()
            #expect(try await sim.simulator.centralRead("2a38").value == "01")
            // 2902 left to bluetoothd, 2901 is the characteristic's first descriptor; "2901" is
            // its UUID (no attribute has handle 2901).
            #expect(try await sim.simulator.centralRead(Self.app + "/service0/char1/desc0").value == "6368657374")
            #expect(try await sim.simulator.centralRead("2901").value == "6368657374")
            #expect(try await sim.simulator.centralWrite(Self.greeting, Array("hi".utf8)).outcome == "written")
            #expect(try await sim.simulator.centralRead(Self.greeting, offset: 1).value == "69")
            #expect(try await sim.simulator.centralSubscribe("2a37").outcome == "written")
            _ = try await sim.simulator.centralUnsubscribe("2a37")
            try await sim.simulator.centralDisconnect()
            #expect(await process.stdoutContains("\"disconnected\""))
            process.sendSignal(SIGINT)
            let result = try await process.finish(timeout: .seconds(30))
            #expect(result.status == 130, "\(result.stderr)")
            let place: (String, String, J) -> [String: J] = { ["service": .string($0), "characteristic": .string($1), "descriptor": $2] }
            let lines = Self.events(result.stdout)
            #expect(lines == [
                Self.registered,
                ["event": "connected", "address": .string(Self.central)],
                .object(["event": "read", "device": .string(Self.central), "offset": 0, "value": "01"].merging(place("180d", "2a38", .null)) { $1 }),
                .object(["event": "read", "device": .string(Self.central), "offset": 0, "value": "6368657374"].merging(place("180d", "2a38", "2901")) { $1 }),
                .object(["event": "read", "device": .string(Self.central), "offset": 0, "value": "6368657374"].merging(place("180d", "2a38", "2901")) { $1 }),
                .object(["event": "write", "device": .string(Self.central), "offset": 0, "type": "request", "value": "6869"]
                    .merging(place(Self.custom, Self.greeting, .null)) { $1 }),
                .object(["event": "read", "device": .string(Self.central), "offset": 1, "value": "69"].merging(place(Self.custom, Self.greeting, .null)) { $1 }),
                .object(["event": "subscribed"].merging(place("180d", "2a37", .null)) { $1 }),
                .object(["event": "unsubscribed"].merging(place("180d", "2a37", .null)) { $1 }),
                ["event": "disconnected", "address": .string(Self.central)],
            ])
            try await sim.expectClean()
            try #expect(await Self.managerCalls(sim) == ["RegisterApplication reply", "UnregisterApplication reply"])
        }
    }

    @Test("standard input's values notified to the subscribed central; a line that gives none reported on stderr, serving goes on")
    func valuesFromStandardInput() async throws {
        try await Sim.with { sim in
            let process = try await Self.launch(sim, stdinPipe: true)
            try await sim.simulator.centralConnect()
            _ = try await sim.simulator.centralSubscribe("2a37")
            // bluetoothd's StartNotify reaches blectl after the central's CCC write is answered.
            #expect(await process.stdoutContains("\"subscribed\""))
            process.writeStdin("{\"characteristic\": \"2a37\", \"value\": \"0051\"}\nnot json\n{\"characteristic\": \"2a99\", \"value\": \"00\"}\n")
            process.writeStdin("{\"characteristic\": \"2a37\", \"service\": \"180d\", \"value\": \"0x00:52\"}\n")
            #expect(try await eventually { try await sim.simulator.centralState().notifications.map(\.value) == ["0051", "0052"] })
            #expect(await process.stdoutContains("\"0052\""))
            try await sim.simulator.centralDisconnect()
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.status == 130)
            let notified = Self.events(result.stdout).filter { $0["event"] == "notified" }
            #expect(notified == [
                ["event": "notified", "service": "180d", "characteristic": "2a37", "descriptor": .null, "value": "0051", "subscribed": true],
                ["event": "notified", "service": "180d", "characteristic": "2a37", "descriptor": .null, "value": "0052", "subscribed": true],
            ])
            let ignored = result.stderr.split(separator: "\n").compactMap { J.parse(String($0)) }
            #expect(ignored.map { $0["line"] } == [2, 3], "\(result.stderr)")
            #expect(result.stderr.contains("standard input line 3: no characteristic 2a99"), "\(result.stderr)")
            try await sim.expectClean()
        }
    }

    @Test("an indicating characteristic: the value indicated, the central's confirmation a confirmed event")
    func indications() async throws {
        let indicating = """
            {"services": [{"uuid": "1809", "characteristics": [{"uuid": "2a1c", "flags": ["indicate"], "value": "00"}]}]}
            """
        try await Sim.with { sim in
            let process = try await Self.launch(sim, profile: indicating, stdinPipe: true)
            try await sim.simulator.centralConnect()
            _ = try await sim.simulator.centralSubscribe("2a1c", indicate: true)
            #expect(await process.stdoutContains("\"subscribed\""))
            process.writeStdin("{\"characteristic\": \"2a1c\", \"value\": \"06fe\"}\n")
            #expect(await process.stdoutContains("\"confirmed\""))
            let received = try await sim.simulator.centralState().notifications
            #expect(received.map(\.kind) == ["indication"] && received.map(\.value) == ["06fe"], "\(received)")
            try await sim.simulator.centralDisconnect()
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            let events = Self.events(result.stdout).map { $0["event"]?.string ?? "" }
            // The link's end and the StopNotify it brings come in either order.
            #expect(Array(events.prefix(5)) == ["registered", "connected", "subscribed", "notified", "confirmed"], "\(events)")
            #expect(Set(events.dropFirst(5)) == ["unsubscribed", "disconnected"] && events.count == 7, "\(events)")
        }
    }

    @Test("notify_every: the values in turn while the central is subscribed, none before")
    func schedule() async throws {
        let scheduled = """
            {"services": [{"uuid": "180f", "characteristics": [
              {"uuid": "2a19", "flags": ["read", "notify"], "value": "64", "notify_every": 0.05, "values": ["63", "62", "61"]}
            ]}]}
            """
        try await Sim.with { sim in
            let process = try await Self.launch(sim, profile: scheduled)
            try await sim.simulator.centralConnect()
            #expect(try await sim.simulator.centralRead("2a19").value == "64")
            _ = try await sim.simulator.centralSubscribe("2a19")
            #expect(try await eventually { try await sim.simulator.centralState().notifications.count >= 4 })
            let values = try await sim.simulator.centralState().notifications.map(\.value)
            #expect(Array(values.prefix(4)) == ["63", "62", "61", "63"])
            _ = try await sim.simulator.centralUnsubscribe("2a19")
            try await sim.simulator.centralDisconnect()
            process.sendSignal(SIGTERM)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGTERM, sim: sim)
        }
    }

    @Test("the example profile (profiles/heart-rate.json) registers as the README shows; its schedule runs while subscribed")
    func exampleProfile() async throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("profiles/heart-rate.json").path
        try await Sim.with { sim in
            let process = try await sim.launch(["serve", example, "--timeout", "60"])
            #expect(await process.stdoutContains("\"registered\""), "\(process.currentStderr)")
            try await sim.simulator.centralConnect()
            #expect(try await sim.simulator.centralRead("2a19").value == "57")
            _ = try await sim.simulator.centralSubscribe("2a37")
            #expect(try await eventually { try await sim.simulator.centralState().notifications.first?.value == "0048" })
            try await sim.simulator.centralDisconnect()
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            #expect(Self.events(result.stdout).first == [
                "event": "registered", "adapter": "hci0", "path": .string(Self.app), "services": ["180d", "180f"], "characteristics": 4,
                "advertising": true, "name": "blectl Heart", "advertised_services": ["180d", "180f"], "skipped": [], "unread": [],
            ])
        }
    }

    @Test("a signal: the application and the advertisement unregistered, nothing left", arguments: [SIGINT, SIGTERM])
    func interrupted(_ signal: Int32) async throws {
        try await Sim.with { sim in
            let process = try await Self.launch(sim)
            try #expect(await sim.state().applications?.map(\.path) == [Self.app])
            process.sendSignal(signal)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: signal, sim: sim)
            try #expect(await Self.managerCalls(sim) == ["RegisterApplication reply", "UnregisterApplication reply"])
        }
    }

    @Test("--no-advertise: the application alone; - reads the profile from standard input")
    func noAdvertiseFromStandardInput() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["serve", "-", "--no-advertise", "--timeout", "60"], stdinPipe: true)
            process.writeStdin(Self.profile)
            process.closeStdin()
            #expect(await process.stdoutContains("\"registered\""), "\(process.currentStderr)")
            let state = try await sim.state()
            #expect(state.applications?.map(\.path) == [Self.app])
            #expect(state.advertisements == [])
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            #expect(Self.events(result.stdout).first?["advertising"] == false)
        }
    }

    @Test("a profile that cannot be served: 65, its line and member named, nothing registered", arguments: [
        ("{\"services\": [\n{\"uuid\": \"180f\", \"characteristics\": [\n{\"uuid\": \"2a19\", \"flags\": [\"read\", \"shout\"]}]}]}",
         "line 3: services[0].characteristics[0].flags[1]: unknown flag \"shout\""),
        ("{\"services\": [{\"uuid\": \"180f\",\n \"characteristics\": [{\"uuid\": \"2a19\"}]}]}",
         "line 2: services[0].characteristics[0].flags: missing"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [\n{\"uuid\": \"2a19\", \"flags\": [\"read\"], \"value\": \"5\"}]}]}",
         "line 2: services[0].characteristics[0].value: expected bytes in hex"),
        ("{\"services\": [{\"uuid\": \"180f\", \"colour\": \"red\"}]}", "line 1: services[0].colour: unknown member"),
        ("{\"services\": [{\"uuid\": \"180f\",\n\n \"characteristics\": [}]}", "line 3: unexpected character"),
        ("{\"services\": [{\"uuid\": \"1800\"}]}", "line 1: services: no service to serve"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [\n{\"uuid\": \"2a19\", \"flags\": [\"read\"], \"notify_every\": 1}]}]}",
         "line 2: services[0].characteristics[0].notify_every: the characteristic neither notifies nor indicates"),
        ("{\"name\": \"a name far too long to fit in a scan response\", \"services\": [{\"uuid\": \"180f\"}]}",
         "line 1: name: 45 bytes: an advertised name holds at most 29"),
    ] as [(String, String)])
    func invalid(_ text: String, _ message: String) async throws {
        try await Sim.with { sim in
            let path = try Self.file(text)
            let run = await sim.blectl(["serve", path, "--timeout", "10"])
            #expect(run.status == 65, "\(run)")
            #expect(run.stdout == "")
            let error = J.parse(run.stderr.trimmingCharacters(in: .newlines))?["error"]
            #expect(error?["code"] == "invalid_profile", "\(run.stderr)")
            guard case .string(let text)? = error?["message"] else { Issue.record("no message: \(run.stderr)"); return }
            #expect(text.hasPrefix("'\(path)' \(message)"), "\(text)")
            try #expect(await Self.managerCalls(sim) == [])
            try await sim.expectClean()
        }
    }

    @Test("--timeout holds while the profile is read: a profile on standard input that never ends, 124, nothing registered")
    func profileNeverEnds() async throws {
        try await Sim.with { sim in
            let process = try await sim.launch(["serve", "-", "--timeout", "1"], stdinPipe: true)
            process.writeStdin("{\"services\": [")
            let result = try await process.finish(timeout: .seconds(20))
            #expect(result.status == 124, "\(result)")
            #expect(result.stderr.contains("not read whole within --timeout"), "\(result.stderr)")
            try #expect(await Self.managerCalls(sim) == [])
        }
    }

    @Test("standard input closed at start: served, no values taken, 0 at the timeout (it was 70); '-' then a usage error")
    func standardInputClosed() async throws {
        try await Sim.with { sim in
            let path = try Self.file(Self.profile)
            let served = await sim.simulator.run("/bin/sh", ["-c", "exec \"$0\" serve \"$1\" --timeout 1 <&-", BlectlBinary.path, path])
            #expect(served.status == 0 && served.stdout.contains("\"registered\""), "\(served)")
            let dash = await sim.simulator.run("/bin/sh", ["-c", "exec \"$0\" serve - --timeout 5 <&-", BlectlBinary.path])
            #expect(dash.status == 64 && dash.stderr.contains("cannot read standard input: it is closed"), "\(dash)")
            try await sim.expectClean()
        }
    }

    @Test("an impostor calling the application gets AccessDenied; the central still reads the profile's value")
    func impostor() async throws {
        try await Sim.with { sim in
            let process = try await Self.launch(sim)
            let client = try #require(try await sim.state().applications?.first?.client)
            let greeting = Self.app + "/service1/char0"
            for call in [[Self.app, "org.freedesktop.DBus.ObjectManager.GetManagedObjects"],
                         [greeting, "org.bluez.GattCharacteristic1.WriteValue", "array:byte:0x66", "dict:string:string:"]] {
                let r = await sim.simulator.run("/usr/bin/dbus-send", ["--system", "--print-reply", "--dest=\(client)"] + call)
                #expect(r.status != 0 && r.stderr.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(call): \(r)")
            }
            try await sim.simulator.centralConnect()
            #expect(try await sim.simulator.centralRead(greeting).value == "68656c6c6f")
            try await sim.simulator.centralDisconnect()
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            #expect(!result.stdout.contains("\"write\""))
        }
    }

    @Test("bluetoothd leaves: 69, stage serve; nothing unregistered (bluetoothd dropped it)")
    func bluetoothdLeaves() async throws {
        try await Sim.with { sim in
            let process = try await Self.launch(sim)
            try await sim.setFault("bluez_exit_on", "Introspect")
            _ = await sim.simulator.run("/usr/bin/dbus-send", ["--system", "--print-reply", "--reply-timeout=5000", "--dest=org.bluez",
                                                               "/", "org.freedesktop.DBus.Introspectable.Introspect"])
            let run = Run(arguments: [], result: try await process.finish(timeout: .seconds(30)))
            #expect(run.status == 69, "\(run)")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "unavailable" && error["operation"] == "serve", "\(error)")
            try #expect(await Self.managerCalls(sim) == ["RegisterApplication reply"])
        }
    }
}
