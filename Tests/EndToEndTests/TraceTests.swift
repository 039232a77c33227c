// `-v`/`--verbose`: the D-Bus trace on stderr. Every line starts with a monotonic time;
// each call has a serial that its reply repeats, with the latency; signals acted on are
// shown at -v, the dropped ones (sim/impostor's) only at -vv, with the reason. stdout is
// the same as without the trace.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("the D-Bus trace (-v, -vv)")
struct TraceTests {
    /// One trace line: its time (seconds since blectl started) and the rest.
    struct Line: CustomStringConvertible {
        var time: Double
        var text: String
        var description: String { "+\(time) \(text)" }
    }

    /// stderr's lines, each of which must be `+SECONDS.MICROS TEXT`.
    static func lines(_ run: Run, exceptLast: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) -> [Line] {
        run.stderr.split(separator: "\n").dropLast(exceptLast).compactMap { raw in
            let parts = raw.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].hasPrefix("+"), let dot = parts[0].firstIndex(of: "."),
                  parts[0][parts[0].index(after: dot)...].count == 6, let time = Double(parts[0].dropFirst()) else {
                Issue.record("not a trace line: \(raw.debugDescription)", sourceLocation: sourceLocation)
                return nil
            }
            return Line(time: time, text: String(parts[1]))
        }
    }

    /// The serial of the first call line containing `needle` (`→ call #7 ...`), and its reply line.
    static func callAndReply(_ lines: [Line], _ needle: String) -> (call: Line, reply: Line?)? {
        guard let call = lines.first(where: { $0.text.hasPrefix("→ call #") && $0.text.contains(needle) }),
              let serial = call.text.split(separator: " ").dropFirst(2).first else { return nil }
        let reply = lines.first { ($0.text.hasPrefix("← return \(serial) (") || $0.text.hasPrefix("← error \(serial) (")) }
        return (call, reply)
    }

    @Test("-v read: calls with destination, path, member and arguments; replies by serial with latency; signals acted on; stdout unchanged")
    func readTrace() async throws {
        try await Sim.with { sim in
            let plain = await sim.blectl(["read", World.probe, "2a19", "--timeout", "30"])
            // The first left its Disconnect with BlueZ: the traced one connects on its own.
            try await sim.expectClean()
            let run = await sim.blectl(["-v", "read", World.probe, "2a19", "--timeout", "30"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == plain.stdout)
            #expect(run.jsonObject()?["value"] == "57")
            let lines = Self.lines(run)
            // Monotonic: never going back.
            #expect(zip(lines, lines.dropFirst()).allSatisfy { $0.time <= $1.time })
            // The bus is named before anything is on the wire, then the unique name it gave.
            #expect(lines.first?.text == "· connecting to \(sim.simulator.address)", "\(lines.first?.description ?? "")")
            #expect(lines.dropFirst().first?.text.hasPrefix("· connected to \(sim.simulator.address) as :") == true, "\(run)")

            let device = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
            let connect = try #require(Self.callAndReply(lines, "org.bluez \(device) org.bluez.Device1.Connect()"), "\(run)")
            let connectReply = try #require(connect.reply, "\(run)")
            #expect(connectReply.time >= connect.call.time)
            #expect(connectReply.text.range(of: #"^← return #\d+ \(\d+\.\d ms\)$"#, options: .regularExpression) != nil, "\(connectReply)")

            let read = try #require(Self.callAndReply(lines, "\(device)/service000f/char0010 org.bluez.GattCharacteristic1.ReadValue({})"), "\(run)")
            let readReply = try #require(read.reply)
            #expect(readReply.text.hasSuffix(" ms) 0x57"), "\(readReply)")

            #expect(Self.callAndReply(lines, "org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.AddMatch(\"type='signal',sender='org.bluez'") != nil)
            #expect(Self.callAndReply(lines, "org.bluez / org.freedesktop.DBus.ObjectManager.GetManagedObjects()")?.reply != nil)
            #expect(Self.callAndReply(lines, "org.bluez \(device) org.bluez.Device1.Disconnect()") != nil)

            // The signal that said Connected=true, from bluetoothd's unique name, before the Connect reply.
            let connected = try #require(lines.firstIndex { $0.text.hasPrefix("← signal :1.") && $0.text.hasSuffix(
                "\(device) org.freedesktop.DBus.Properties.PropertiesChanged(\"org.bluez.Device1\", {Connected: true}, [])") }, "\(run)")
            let replyIndex = try #require(lines.firstIndex { $0.text == connectReply.text })
            #expect(connected < replyIndex)
            #expect(!run.stderr.contains("(dropped"))
            try await sim.expectClean()
        }
    }

    @Test("-v names the bus it connects to before the error, when the bus cannot be reached or never answers", arguments: [false, true])
    func busNamedBeforeItsError(answers: Bool) async throws {
        try await Sim.with { sim in
            // A socket nobody listens on (refused at once), or one that accepts and never
            // answers `Hello` (the command's timeout ends it).
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-trace-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("bus").path
            var silent: Int32 = -1
            if answers {
                silent = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_un()
                address.sun_family = sa_family_t(AF_UNIX)
                withUnsafeMutableBytes(of: &address.sun_path) { raw in
                    path.utf8CString.withUnsafeBytes { raw.copyMemory(from: $0) }
                }
                let bound = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                }
                try #require(bound == 0 && listen(silent, 4) == 0)
            }
            defer { if silent >= 0 { close(silent) } }
            let run = await sim.blectl(["-v", "get-battery", World.probe, "--timeout", "2"],
                                       environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(path)"])
            #expect(run.status == (answers ? 124 : 69), "\(run)")
            let lines = Self.lines(run, exceptLast: 1)
            #expect(lines.map(\.text) == ["· connecting to unix:path=\(path)"], "\(run)")
            let last = try #require(run.stderr.split(separator: "\n").last)
            #expect(J.parse(String(last))?["error"]?["operation"] == "bus", "\(run)")
        }
    }

    @Test("-v: a bus address with control characters stays on one trace line, shown with ?")
    func busAddressControlCharacters() async throws {
        try await Sim.with { sim in
            let forged = "unix:path=/nonexistent/blectl\n+0.000001 · connected to fake as :1.1\u{1B}[31m"
            let run = await sim.blectl(["-v", "devices", "--timeout", "5"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": forged])
            #expect(run.status == 69, "\(run)")
            #expect(Self.lines(run, exceptLast: 1).map(\.text) == ["· connecting to unix:path=/nonexistent/blectl?+0.000001 · connected to fake as :1.1?[31m"],
                    "\(run)")
            #expect(!run.stderr.contains("\u{1B}"))
            // libdbus's message about it ends with a line end: not kept.
            let message = try #require(J.parse(String(run.stderr.split(separator: "\n").last ?? ""))?["error"]?["message"]?.string, "\(run)")
            #expect(message.hasPrefix("cannot connect to the system bus: "), "\(message)")
            #expect(message.last?.isWhitespace == false, "\(message.debugDescription)")
            // The text form's error is one line too.
            let text = await sim.blectl(["-f", "text", "devices", "--timeout", "5"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": forged])
            #expect(text.status == 69, "\(text)")
            #expect(text.stderr.hasPrefix("blectl: error: cannot connect to the system bus: "), "\(text)")
            #expect(text.stderr.filter { $0 == "\n" }.count == 1 && text.stderr.hasSuffix("\n"), "\(text.stderr.debugDescription)")
            #expect(!text.stderr.contains("\u{1B}"))
        }
    }

    @Test("an error reply: its D-Bus name and message, after the call's serial")
    func errorReply() async throws {
        try await Sim.with(faults: ["connect_fail": "le-connection-abort-by-remote"]) { sim in
            let run = await sim.blectl(["-v", "connect", World.probe, "--timeout", "30"])
            #expect(run.status == 1, "\(run)")
            let lines = Self.lines(run, exceptLast: 1)
            let connect = try #require(Self.callAndReply(lines, "org.bluez.Device1.Connect()"), "\(run)")
            let reply = try #require(connect.reply, "\(run)")
            #expect(reply.text.range(of: #"^← error #\d+ \(\d+\.\d ms\) org\.bluez\.Error\.Failed "le-connection-abort-by-remote"$"#,
                                     options: .regularExpression) != nil, "\(reply)")
            // The error object is still the last line (JSON, as without -v).
            let last = try #require(run.stderr.split(separator: "\n").last)
            #expect(J.parse(String(last))?["error"]?["dbus_error"] == "org.bluez.Error.Failed", "\(run)")
        }
    }

    @Test("-vv shows the impostor's signals as dropped, naming sender and owner; -v does not; results unchanged")
    func droppedSignals() async throws {
        try await Sim.with { sim in
            let impostor = try await sim.startImpostor()
            let once = await sim.blectl(["-v", "get-battery", World.battery1, "--timeout", "30"])
            // The -vv run's Connect is held (connect_held) until its trace shows a signal of
            // the impostor's dropped: the impostor reaches it however slow the machine is
            // (a run of about a second did not always overlap one of its rounds under load).
            // The -v run's link down first (BlueZ ends it after blectl left): else the -vv run
            // finds it up, needs no Connect and may be done before the impostor's next round.
            try #require(await sim.waitForState { $0.connections.isEmpty })
            try await sim.setFault("connect_held", "1")
            let arguments = ["-vv", "get-battery", World.battery1, "--timeout", "60"]
            let process = try await sim.launch(arguments)
            let reached = try await offThread {
                process.waitForStderr(containing: "(dropped: sender \(impostor.uniqueName) ", timeout: .seconds(60))
            }
            try await sim.setFault("connect_held", "0")
            let twice = Run(arguments: arguments, result: try await process.finish(timeout: .seconds(60)))
            #expect(reached, "the impostor never reached the -vv run: \(twice.stderr.prefix(3000))")
            let report = try await impostor.finish()
            #expect(report.signals > 0)
            for run in [once, twice] {
                #expect(run.status == 0, "\(run)")
                #expect(run.jsonObject() == ["address": "C0:FF:EE:00:00:03", "percentage": 42, "source": "battery1"])
            }
            // org.bluez's owner, as GetNameOwner answered: `← return #6 (0.1 ms) ":1.0"`.
            let ownerReply = try #require(Self.callAndReply(Self.lines(twice), "GetNameOwner(\"org.bluez\")")?.reply, "\(twice)")
            let owner = try #require(ownerReply.text.split(separator: "\"").dropFirst().first.map(String.init))
            let dropped = Self.lines(twice).filter { $0.text.hasSuffix("(dropped: sender \(impostor.uniqueName) is not org.bluez's owner \(owner))") }
            #expect(!dropped.isEmpty, "\(twice.stderr.prefix(3000))")
            #expect(dropped.allSatisfy { $0.text.hasPrefix("← signal \(impostor.uniqueName) ") })
            // -v: no dropped signal, and no signal line from the impostor at all.
            #expect(!once.stderr.contains("(dropped"))
            #expect(!once.stderr.contains("← signal \(impostor.uniqueName) "))
            #expect(once.stderr.contains("→ call #"))
        }
    }
}
