// blectl-sim (sim/blectl-sim), as a user's script runs it: the README's three lines
// exactly, then fault/state/stop and their exit statuses. Each test has its own
// XDG_RUNTIME_DIR, so its simulator is its own (one per user and runtime directory).

import Foundation
import SimulatorHarness
import Testing

@Suite("blectl-sim for users' scripts")
struct BlectlSimTests {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The fenced block after `<!-- test-deb: three lines -->` in the README.
    static let readmeScript: String = {
        let readme = (try? String(contentsOf: repoRoot.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
        let after = readme.components(separatedBy: "<!-- test-deb: three lines -->\n```sh\n").dropFirst().first ?? ""
        return after.components(separatedBy: "\n```").first ?? ""
    }()

    /// A private runtime directory and a bin directory with blectl and blectl-sim, as an
    /// installation has them; removed (the simulator stopped first) after `body`.
    static func withUser(_ body: (_ run: @escaping @Sendable (String) async throws -> Run, _ runtime: URL) async throws -> Void) async throws {
        let top = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-sim-test-\(UUID().uuidString)")
        let runtime = top.appendingPathComponent("run"), bin = top.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("blectl").path,
                                                   withDestinationPath: BlectlBinary.path)
        try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent("blectl-sim").path,
                                                   withDestinationPath: repoRoot.appendingPathComponent("sim/blectl-sim").path)
        let environment = ["PATH": bin.path + ":/usr/bin:/bin", "HOME": top.path, "XDG_RUNTIME_DIR": runtime.path]
        let run: @Sendable (String) async throws -> Run = { script in
            // The harness's spawn (close-on-exec pipes, read in full): Foundation's Process
            // here hung once, its pipe never reaching EOF while other tests spawned children.
            let r = try await offThread { try runToEnd("/bin/bash", ["-euo", "pipefail", "-c", script], environment: environment) }
            return Run(arguments: ["bash", "-c", script], status: r.status, stdout: r.stdout, stderr: r.stderr)
        }
        do {
            try await body(run, runtime)
        } catch {
            _ = try? await run("blectl-sim stop")
            try? FileManager.default.removeItem(at: top)
            throw error
        }
        _ = try? await run("blectl-sim stop")
        try? FileManager.default.removeItem(at: top)
    }

    /// Whether process `pid` runs: it exists and is not a zombie waiting for init to reap it.
    static func running(_ pid: String) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    @Test("none of the user's own running: the simulator on DBUS_SYSTEM_BUS_ADDRESS (sim/start's) answers; none there either: 1")
    func simulatorOfTheBusAddress() async throws {
        try await Sim.with { sim in
            try await Self.withUser { run, _ in
                let found = try await run("DBUS_SYSTEM_BUS_ADDRESS='\(sim.simulator.address)' blectl-sim applications")
                #expect(found.status == 0 && J.parse(found.stdout.trimmingCharacters(in: .newlines)) == ["applications": [], "refused": []],
                        "\(found)")
                let central = try await run("DBUS_SYSTEM_BUS_ADDRESS='\(sim.simulator.address)' blectl-sim central")
                #expect(central.status == 0 && central.stdout.contains("C0:FF:EE:00:CE:01"), "\(central)")
                let none = try await run("blectl-sim applications")
                #expect(none.status == 1 && none.stderr.contains("no simulator is running"), "\(none)")
            }
        }
    }

    @Test("the README's three lines pass, leave nothing running, and fail on a wrong value")
    func readmeScript() async throws {
        let script = Self.readmeScript
        #expect(script.split(separator: "\n").count == 3, "README's three-line script: \(script)")
        #expect(script.hasPrefix("eval \"$(blectl-sim start)\"\n"))
        try await Self.withUser { run, runtime in
            let ok = try await run(script)
            #expect(ok.status == 0, "\(ok)")
            #expect(ok.stdout.isEmpty, "\(ok)")
            #expect(!FileManager.default.fileExists(atPath: runtime.appendingPathComponent("blectl-sim/pid").path))

            let wrong = try await run(script.replacing(#""percentage":87"#, with: #""percentage":86"#))
            #expect(wrong.status == 1, "\(wrong)")
            // It stopped at the grep: the simulator is still up, and stops.
            let pid = try String(contentsOf: runtime.appendingPathComponent("blectl-sim/pid"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(Self.running(pid))
            let stop = try await run("blectl-sim stop")
            #expect(stop.status == 0 && stop.stdout.isEmpty, "\(stop)")
            #expect(!Self.running(pid), "bluez-sim \(pid) still running after stop")
        }
    }

    @Test("start twice, fault, state, stop twice: statuses, messages and the faults in the state")
    func commands() async throws {
        try await Self.withUser { run, _ in
            let start = try await run(#"blectl-sim start --set second_adapter=1"#)
            #expect(start.status == 0, "\(start)")
            #expect(start.stdout.hasPrefix("export DBUS_SYSTEM_BUS_ADDRESS='unix:"), "\(start)")
            let again = try await run("blectl-sim start")
            #expect(again.status == 1 && again.stderr.contains("already running"), "\(again)")

            let script = start.stdout + """
                blectl-sim fault adapter_powered_off 1 >/dev/null
                blectl adapters
                blectl-sim state
                """
            let faulted = try await run(script)
            #expect(faulted.status == 0, "\(faulted)")
            let objects = faulted.stdout.split(separator: "\n").map {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:]
            }
            #expect(objects.count == 3, "\(faulted)")
            #expect(objects.prefix(2).map { "\($0["name"] ?? "") \($0["powered"] ?? "")" } == ["hci0 0", "hci1 0"], "\(faulted)")
            let faults = objects.last?["faults"] as? [String: Any] ?? [:]
            #expect(faults.keys.sorted() == ["adapter_powered_off", "second_adapter"], "\(faulted)")
            #expect(faults.values.allSatisfy { ($0 as? Bool) == true }, "\(faulted)")
            let unknown = try await run("blectl-sim fault no_such_fault 1")
            #expect(unknown.status == 1 && unknown.stderr.contains("unknown fault 'no_such_fault'"), "\(unknown)")
            let usage = try await run("blectl-sim fault adapter_powered_off")
            #expect(usage.status == 2 && usage.stderr.contains("fault takes NAME VALUE"), "\(usage)")

            #expect(try await run("blectl-sim stop").status == 0)
            #expect(try await run("blectl-sim stop").status == 0)
            let state = try await run("blectl-sim state")
            #expect(state.status == 1 && state.stderr.contains("no simulator is running"), "\(state)")
        }
    }

    @Test("start --bluez: the version modelled, its faults on unless set off; an unsupported one is a usage error")
    func bluezVersion() async throws {
        try await Self.withUser { run, _ in
            let script = """
                eval "$(blectl-sim start --bluez 5.87 --set uuid_filter_crash=false)"
                blectl-sim state
                blectl doctor --format text | grep bluetoothd
                blectl-sim stop
                """
            let started = try await run(script)
            #expect(started.status == 0, "\(started)")
            let lines = started.stdout.split(separator: "\n")
            let state = (try? JSONSerialization.jsonObject(with: Data((lines.first ?? "").utf8))) as? [String: Any] ?? [:]
            #expect(state["bluez"] as? String == "5.87", "\(started)")
            #expect((state["faults"] as? [String: Any])?.keys.sorted() == ["empty_filter_is_regular"], "\(started)")
            #expect(lines.count == 2 && lines[1].hasSuffix("; BlueZ 5.87"), "\(started)")
            let unsupported = try await run("blectl-sim start --bluez 5.70")
            #expect(unsupported.status == 2 && unsupported.stdout.isEmpty, "\(unsupported)")
            #expect(unsupported.stderr.hasPrefix("blectl-sim: start: unsupported BlueZ version '5.70' (supported: 5.66, 5.82, 5.87)"),
                    "\(unsupported)")
        }
    }
}
