// `blectl completions bash|zsh|fish`, driven through the real shells (Debian's bash, zsh and
// fish, installed by `make deps`): subcommands, aliases, options and their short names,
// --format's values, the adapters and the devices the simulated BlueZ knows (with names
// where the shell shows descriptions), files for --file, nothing for free text.

import Foundation
import SimulatorHarness
import Testing

@Suite("shell completions")
struct CompletionTests {
    static let subcommands = ["scan", "connect", "get-version", "version", "get-battery", "battery", "read", "write",
                              "request", "notify", "disconnect", "info", "devices", "adapters", "pair", "unpair", "advertise", "serve", "doctor",
                              "completions", "help"]
    static let names = ["blesim Probe", "blesim Vendor", "blesim Battery1", "blesim GattBattery", "blesim Plain"]
    static let scanOptions = ["--timeout", "-t", "--name", "-n", "--service", "-s", "--address", "--rssi-min", "--decoded", "--count",
                              "--updates", "--min-interval", "--changes-only", "--lost-after", "--bindkey", "--mqtt", "--mqtt-gateway",
                              "--mqtt-keepalive", "--mqtt-queue", "--mqtt-cafile", "--adapter", "--format", "-f",
                              "--verbose", "-v", "--quiet", "-q", "--help", "-h"]

    /// PATH with blectl's directory first, as a user who installed it has.
    static var environment: [String: String] {
        let directory = URL(fileURLWithPath: BlectlBinary.path).deletingLastPathComponent().path
        // Tab's 0.5 s for bluetoothd is for people; a loaded test machine gets 30 s.
        return ["PATH": directory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                "BLECTL_COMPLETION_TIMEOUT": "30"]
    }

    static func shell(_ sim: Sim, _ executable: String, _ arguments: [String]) async -> Run {
        let simulator = sim.simulator
        let environment = environment
        let r = (try? await offThread { simulator.run(executable, arguments, environment: environment) })
            ?? (status: -1, stdout: "", stderr: "could not run \(executable)")
        return Run(arguments: [executable] + arguments, status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    /// A simulator whose BlueZ knows the five named devices (after a scan that heard all ten).
    static func withKnownDevices(_ body: (Sim) async throws -> Void) async throws {
        try await Sim.with { sim in
            let scan = await sim.blectl(["scan", "--count", "10", "--timeout", "60"])
            #expect(scan.status == 0, "\(scan)")
            try await body(sim)
        }
    }

    /// bash: COMP_LINE/COMP_POINT as readline sets them, `_blectl` called, COMPREPLY printed.
    /// Colons are in COMP_WORDBREAKS, so the reply for `C0:FF:EE:00:00:0` is what follows
    /// the last colon, as bash-completion's own scripts do.
    @Test("bash: every kind of word, exact")
    func bash() async throws {
        try await Self.withKnownDevices { sim in
            let script = #"source <(blectl completions bash) || exit 3; for line in "$@"; do COMP_LINE="$line"; COMP_POINT=${#line}; COMPREPLY=(); _blectl; echo "${COMPREPLY[*]}"; done"#
            let cases: [(String, String)] = [
                ("blectl ", Self.subcommands.joined(separator: " ")),
                ("blectl sc", "scan"),
                ("blectl scan --t", "--timeout"),
                ("blectl scan -", Self.scanOptions.joined(separator: " ")),
                ("blectl --format ", "json text"),
                ("blectl read -f t", "text"),
                ("blectl --adapter ", "hci0"),
                ("blectl scan -t5 --adapter h", "hci0"),
                ("blectl read ", World.known.joined(separator: " ")),
                ("blectl scan --address ", World.known.joined(separator: " ")),
                ("blectl version C0:FF:EE:00:00:0", "01 02 03 04 05"),
                ("blectl --format json battery -t 3 C0", World.known.joined(separator: " ")),
                ("blectl read C0:FF:EE:00:00:01 ", ""),
                ("blectl scan --timeout ", ""),
                ("blectl completions ", "bash zsh fish"),
                ("blectl help g", "get-version get-battery"),
                ("blectl frobnicate ", ""),
                // --opt=value: the value after '=' (readline's word).
                ("blectl --format=t", "text"),
                ("blectl scan --format=", "json text"),
                ("blectl scan --adapter=h", "hci0"),
            ]
            let run = await Self.shell(sim, "/bin/bash", ["-c", script, "_"] + cases.map(\.0))
            #expect(run.status == 0 && run.stderr == "", "\(run)")
            for (index, (line, expected)) in cases.enumerated() {
                #expect(run.lines.count > index && run.lines[index] == expected, "\(line.debugDescription): \(run.lines.count > index ? run.lines[index] : "(none)")")
            }
        }
    }

    /// fish: `complete -C` prints the candidates, with the description after a tab.
    @Test("fish: every kind of word, with descriptions, exact")
    func fish() async throws {
        try await Self.withKnownDevices { sim in
            func complete(_ line: String) async -> [String] {
                let run = await Self.shell(sim, "/usr/bin/fish", ["--no-config", "-c", "blectl completions fish | source; or exit 3; complete -C $argv[1]", line])
                #expect(run.status == 0 && run.stderr == "", "\(run)")
                return run.lines
            }
            let devices = zip(World.known, Self.names).map { "\($0)\t\($1)" }
            #expect(await complete("blectl read ") == devices)
            #expect(await complete("blectl read C0:FF:EE:00:00:0") == devices)
            #expect(await complete("blectl pair --trust ") == devices)
            #expect(await complete("blectl read C0:FF:EE:00:00:01 ") == [])
            #expect(await complete("blectl --format ") == ["json\tOutput format: json or text", "text\tOutput format: json or text"])
            #expect(await complete("blectl scan --adapter ") == ["hci0\t00:1A:7D:DA:71:13"])
            #expect(await complete("blectl completions ") == ["bash", "fish", "zsh"])
            #expect(await complete("blectl scan --ti") == ["--timeout\tStop scanning after this many seconds; decimals allowed, inf to scan until interrupted"])
            let top = await complete("blectl ")
            #expect(top.map { String($0.prefix { $0 != "\t" }) }.sorted() == Self.subcommands.sorted())
            #expect(top.contains("version\tSame as get-version"))
            #expect(top.contains("read\tRead a characteristic's value"))
        }
    }

    /// zsh: the script installed in `$fpath` and registered by compinit; the completion
    /// system's own output functions (`_describe`, `compadd`, `_files`) stand in as test
    /// hooks that print what they are given, `words`/`CURRENT` set as zle sets them.
    @Test("zsh: registered by compinit from $fpath; every kind of word, with descriptions, exact")
    func zsh() async throws {
        try await Self.withKnownDevices { sim in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-zsh-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let generated = await sim.blectl(["completions", "zsh"])
            #expect(generated.status == 0 && generated.stdout.hasPrefix("#compdef blectl\n"), "\(generated)")
            try generated.stdout.write(to: directory.appendingPathComponent("_blectl"), atomically: true, encoding: .utf8)
            let script = #"""
                fpath=("$1" $fpath); shift
                autoload -U compinit && compinit -u -D
                print -r -- "registered: ${_comps[blectl]}"
                _describe() { print -rl -- "${(@P)${@[-1]}}"; }
                compadd() { [[ $1 == -a ]] && print -rl -- "${(@P)2}"; }
                _files() { print -r -- "(files)"; }
                for line in "$@"; do
                    words=("${(@z)line}"); [[ $line == *' ' ]] && words+=('')
                    CURRENT=${#words}
                    print -r -- "== $line"
                    _blectl
                done
                """#
            let lines = ["blectl ", "blectl read ", "blectl read C0:FF:EE:00:00:01 ", "blectl --format ",
                         "blectl battery --adapter ", "blectl scan --tim", "blectl completions ", "blectl write X 2a19 --file "]
            let run = await Self.shell(sim, "/usr/bin/zsh", ["-f", "-c", script, "_", directory.path] + lines)
            #expect(run.status == 0 && run.stderr == "", "\(run)")
            var answers: [String: [String]] = [:]
            var current: String?
            for line in run.lines {
                if line.hasPrefix("== ") { current = String(line.dropFirst(3)); answers[current!] = [] }
                else if let current { answers[current]!.append(line) }
            }
            #expect(run.lines.first == "registered: _blectl")
            #expect(answers["blectl "]?.count == Self.subcommands.count)
            #expect(answers["blectl "]?.first == "scan:Scan for Bluetooth LE devices and print each one found")
            #expect(answers["blectl "]?.contains("battery:Same as get-battery") == true)
            #expect(answers["blectl read "] == zip(World.known, Self.names).map { "\($0.replacingOccurrences(of: ":", with: "\\:")):\($1)" })
            #expect(answers["blectl read C0:FF:EE:00:00:01 "] == [])
            #expect(answers["blectl --format "] == ["json", "text"])
            #expect(answers["blectl battery --adapter "] == ["hci0:00:1A:7D:DA:71:13"])
            #expect(answers["blectl scan --tim"]?.first == "--timeout:Stop scanning after this many seconds; decimals allowed, inf to scan until interrupted")
            #expect(answers["blectl completions "] == ["bash", "zsh", "fish"])
            #expect(answers["blectl write X 2a19 --file "] == ["(files)"])
        }
    }

    @Test("no bus: nothing offered, nothing on stderr, exit 0")
    func noBus() async throws {
        try await Sim.with { sim in
            for kind in ["devices", "adapters"] {
                let run = await sim.blectl(["__complete", kind], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/blectl-test"])
                #expect(run.status == 0 && run.stdout == "" && run.stderr == "", "\(run)")
            }
            let known = await sim.blectl(["__complete", "adapters"], environment: ["BLECTL_COMPLETION_TIMEOUT": "30"])
            #expect(known.status == 0 && known.stdout == "hci0\t00:1A:7D:DA:71:13\n", "\(known)")
        }
    }

    @Test("bluetoothd not answering within BLECTL_COMPLETION_TIMEOUT: nothing offered, exit 0")
    func bluetoothdSilent() async throws {
        try await Sim.with(faults: ["get_managed_objects_held": "1"]) { sim in
            let run = await sim.blectl(["__complete", "devices"], environment: ["BLECTL_COMPLETION_TIMEOUT": "0.2"])
            #expect(run.status == 0 && run.stdout == "" && run.stderr == "", "\(run)")
            // It did ask: the held GetManagedObjects is what it gave up on.
            let calls = try await sim.calls()
            #expect(calls.contains { $0.member == "GetManagedObjects" }, "\(calls)")
        }
    }

    /// A path with spaces, typed escaped as in a shell, completes to the whole name (bash then
    /// quotes it when inserting: -o filenames).
    @Test("bash: --file paths with spaces stay one word")
    func bashFileWithSpaces() async throws {
        try await Sim.with { sim in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blectl comp \(getpid())/dir with space")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent("file one.bin").path, contents: Data()))
            let parent = directory.deletingLastPathComponent().path
            let escaped = (directory.path + "/f").replacingOccurrences(of: " ", with: "\\ ")
            let script = #"source <(blectl completions bash) || exit 3; for line in "$@"; do COMP_LINE="$line"; COMP_POINT=${#line}; COMPREPLY=(); _blectl; printf '[%s]' "${COMPREPLY[@]}"; echo; done"#
            let lines = ["blectl write X 2a19 --without-response --file \(parent.replacingOccurrences(of: " ", with: "\\ "))/dir",
                         "blectl write X 2a19 --without-response --file \(escaped)"]
            let run = await Self.shell(sim, "/bin/bash", ["-c", script, "_"] + lines)
            #expect(run.status == 0 && run.stderr == "", "\(run)")
            #expect(run.lines == ["[\(directory.path)]", "[\(directory.path)/file one.bin]"], "\(run)")
        }
    }

    @Test("__complete: anything but one known kind lists nothing")
    func completeStrict() async throws {
        try await Sim.with { sim in
            for arguments in [["__complete"], ["__complete", "bogus"], ["__complete", "adapters", "--format", "text"]] {
                let run = await sim.blectl(arguments)
                #expect(run.status == 0 && run.stdout == "" && run.stderr == "", "\(run)")
            }
        }
    }
}
