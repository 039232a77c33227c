// The progress line: blectl run with stderr (and, in one test, stdout too) on a
// pseudo-terminal, driven by python3's pty module. The line is drawn as CR TEXT ESC[K,
// updated in place, erased with CR ESC[K before a result reaches the terminal and at the
// end; none of it without a terminal, with -q, with -v or with TERM=dumb. The tests wait
// for what the terminal shows (and the simulator's held Connect), never for a time.

import Foundation
import SimulatorHarness
import Testing

@Suite("the progress line on a terminal")
struct ProgressLineTests {
    /// Runs blectl with stderr on a pseudo-terminal (and stdout too when `stdoutOnTerminal`);
    /// once the terminal has shown `when` (`N:PREFIX`: N different progress lines starting
    /// with PREFIX), does `then` once: `SIGINT` (to blectl) or `fault NAME VALUE`
    /// (sim/simctl). Prints {status, stdout, tty} (base64) as JSON.
    static let driver = #"""
        import base64, json, os, pty, re, select, signal, subprocess, sys
        both, when, then, args = sys.argv[1] == "both", sys.argv[2], sys.argv[3], sys.argv[4:]
        master, slave = pty.openpty()
        child = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave if both else subprocess.PIPE, stderr=slave)
        os.close(slave)
        tty, out, done = b"", b"", False
        fds = [master] + ([] if both else [child.stdout])
        while fds:
            ready, _, _ = select.select(fds, [], [], 30)
            if not ready:
                child.kill(); break
            for fd in ready:
                try:
                    data = os.read(fd if fd == master else fd.fileno(), 65536)
                except OSError:
                    data = b""
                if not data:
                    fds.remove(fd); continue
                if fd == master: tty += data
                else: out += data
            if not done and when != "-":
                n, prefix = when.split(":", 1)
                draws = set(re.findall(rb"\r([^\r\x1b]*)\x1b\[K", tty))
                if len([d for d in draws if d.startswith(prefix.encode())]) < int(n): continue
                done = True
                if then == "SIGINT": child.send_signal(signal.SIGINT)
                elif then.startswith("fault "):
                    _, name, value = then.split(" ")
                    subprocess.run([os.environ["BLESIM_SIMCTL"], "fault", name, value], check=True, stdout=subprocess.DEVNULL)
        status = child.wait()
        print(json.dumps({"status": status, "stdout": base64.b64encode(out).decode(), "tty": base64.b64encode(tty).decode()}))
        """#

    struct TerminalRun: CustomStringConvertible {
        var status: Int
        var stdout: String
        /// What the terminal got, escape sequences included.
        var tty: String
        var description: String { "status \(status)\nstdout: \(stdout)\ntty: \(tty.debugDescription)" }
    }

    static func run(_ sim: Sim, _ arguments: [String], stdoutOnTerminal: Bool = false, when: String = "-", then: String = "-",
                    environment: [String: String] = ["TERM": "xterm"]) async throws -> TerminalRun {
        let simctl = sim.simulator.repoRoot.appendingPathComponent("sim/simctl").path
        let simulator = sim.simulator
        let arguments = ["-c", driver, stdoutOnTerminal ? "both" : "stderr", when, then, BlectlBinary.path] + arguments
        let environment = environment.merging(["BLESIM_SIMCTL": simctl]) { $1 }
        let run = try await offThread { simulator.run("/usr/bin/python3", arguments, environment: environment, timeout: .seconds(90)) }
        let object = try #require(J.parse(run.stdout), "driver: \(run)")
        let decode = { (key: String) in
            String(decoding: Data(base64Encoded: object[key]?.string ?? "") ?? Data(), as: UTF8.self)
        }
        return TerminalRun(status: object["status"]?.int ?? -1, stdout: decode("stdout"), tty: decode("tty"))
    }

    static let erase = "\r\u{1B}[K"

    /// The texts drawn (`CR TEXT ESC[K`), in order.
    static func draws(_ tty: String) -> [String] {
        tty.components(separatedBy: "\r").dropFirst().compactMap { piece in
            guard piece.hasSuffix("\u{1B}[K"), piece.count > 3 else { return nil }
            return String(piece.dropLast(3))
        }
    }

    /// Runs blectl with stderr on a pseudo-terminal whose output is stopped (as Ctrl-S does; the
    /// terminal is never read either), stdout a pipe; returns blectl's exit status, or nil when
    /// it had not ended 30 s after it started (then it is killed).
    static let stoppedTerminalDriver = #"""
        import json, os, pty, subprocess, sys, termios
        master, slave = pty.openpty()
        termios.tcflow(slave, termios.TCOOFF)
        child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
        try:
            out, _ = child.communicate(timeout=30)
            status = child.returncode
        except subprocess.TimeoutExpired:
            child.kill(); out, _ = child.communicate(); status = None
        print(json.dumps({"status": status, "lines": len(out.splitlines())}))
        """#

    @Test("a stopped terminal (Ctrl-S) holds only the progress line: the scan ends at its timeout and stops discovery")
    func stoppedTerminal() async throws {
        try await Sim.with { sim in
            let simulator = sim.simulator
            let arguments = ["-c", Self.stoppedTerminalDriver, BlectlBinary.path, "scan", "--timeout", "2"]
            let run = try await offThread { simulator.run("/usr/bin/python3", arguments, environment: ["TERM": "xterm"], timeout: .seconds(90)) }
            let object = try #require(J.parse(run.stdout), "driver: \(run)")
            // Before the line kept its lock across its write, the first drawing blocked on the
            // stopped terminal while holding it, and every update of the line (the scan's,
            // the clean-up's) waited for it: the scan never ended and StopDiscovery was not sent.
            #expect(object["status"]?.int == 0, "\(run)")
            #expect(object["lines"]?.int == (World.known + World.fillers).count, "\(run)")
            try #expect(await sim.calls().filter { $0.member == "StopDiscovery" }.count == 1)
            try await sim.expectClean()
        }
    }

    @Test("scan: 'scanning: N devices (T s)' drawn and updated in place, erased at the end; stdout intact")
    func scan() async throws {
        try await Sim.with { sim in
            // Interrupted once the line has shown all ten devices: what is seen decides, not a clock.
            let run = try await Self.run(sim, ["scan", "--timeout", "inf"], when: "2:scanning: 10 devices (", then: "SIGINT")
            #expect(run.status == -2, "\(run)")  // ended by SIGINT (Python's negative status)
            let draws = Self.draws(run.tty)
            #expect(draws.contains { $0.hasPrefix("scanning: 10 devices (") && $0.hasSuffix(" s)") }, "\(run)")
            #expect(Set(draws).count >= 2, "updated in place: \(draws)")
            #expect(draws.allSatisfy { $0.range(of: #"^[a-z][^\n\r\x{1B}]* \(\d+\.\d s\)$"#, options: .regularExpression) != nil }, "\(draws)")
            #expect(!run.tty.contains("\n"), "one line only: \(run)")
            #expect(run.tty.hasSuffix(Self.erase), "\(run)")
            let lines = run.stdout.split(separator: "\n")
            #expect(Set(lines.compactMap { J.parse(String($0))?["address"]?.string }) == Set(World.known + World.fillers), "\(run)")
            try await sim.expectClean()
        }
    }

    @Test("read with stdout on the terminal too: connecting, then the result on a line of its own with the progress erased before it")
    func readOnTerminal() async throws {
        try await Sim.with(faults: ["connect_held": "1"]) { sim in
            let run = try await Self.run(sim, ["read", World.probe, "2a19", "--timeout", "30"], stdoutOnTerminal: true,
                                         when: "1:connecting to C0:FF:EE:00:00:01 (", then: "fault connect_held 0")
            #expect(run.status == 0, "\(run)")
            let result = #"{"address":"C0:FF:EE:00:00:01","service":"180f","characteristic":"2a19","descriptor":null,"value":"57","text":"W","#
                + #""decoded":{"name":"Battery Level","fields":[{"name":"Battery Level","value":87,"unit":"percentage"}]}}"#
            // The terminal turns \n into \r\n.
            let at = try #require(run.tty.range(of: result + "\r\n"), "\(run)")
            let before = run.tty[..<at.lowerBound]
            #expect(before.hasSuffix(Self.erase), "progress erased before the result: \(run)")
            let draws = Self.draws(String(before))
            #expect(draws.contains { $0.hasPrefix("connecting to C0:FF:EE:00:00:01 (") }, "\(draws)")
            #expect(run.tty.hasSuffix(Self.erase) || run.tty.hasSuffix(result + "\r\n"), "\(run)")
            try await sim.expectClean()
        }
    }

    @Test("an error is printed after the line is erased")
    func errorAfterErase() async throws {
        try await Sim.with(faults: ["connect_held": "1"]) { sim in
            let run = try await Self.run(sim, ["read", World.probe, "2a19", "--timeout", "30"], when: "1:connecting to", then: "SIGINT")
            #expect(run.status == -2, "\(run)")
            #expect(run.tty.hasSuffix(Self.erase), "\(run)")
            #expect(run.stdout == "")
        }
        try await Sim.with(faults: ["connect_fail": "le-connection-abort-by-remote"]) { sim in
            let run = try await Self.run(sim, ["read", World.probe, "2a19", "--timeout", "30"])
            #expect(run.status == 1, "\(run)")
            let error = try #require(run.tty.range(of: #"{"error":"#), "\(run)")
            let before = String(run.tty[..<error.lowerBound])
            #expect(before.isEmpty || before.hasSuffix(Self.erase), "\(run)")
            #expect(run.tty.hasSuffix("}\r\n"), "nothing after the error: \(run)")
        }
    }

    @Test("nothing of it with -q, with TERM=dumb, or when stderr is not a terminal; only trace lines with -v")
    func absent() async throws {
        try await Sim.with { sim in
            let quiet = try await Self.run(sim, ["-q", "scan", "--count", "10", "--timeout", "60"])
            #expect(quiet.status == 0)
            #expect(quiet.tty == "", "\(quiet)")
            #expect(quiet.stdout.split(separator: "\n").count == 10)

            let dumb = try await Self.run(sim, ["scan", "--count", "10", "--timeout", "60"], environment: ["TERM": "dumb"])
            #expect(dumb.tty == "", "\(dumb)")

            let verbose = try await Self.run(sim, ["-v", "scan", "--count", "10", "--timeout", "60"])
            #expect(verbose.status == 0)
            #expect(!verbose.tty.contains("\u{1B}"), "\(verbose)")
            #expect(verbose.tty.split(separator: "\r\n").allSatisfy { $0.hasPrefix("+") }, "\(verbose)")

            let piped = await sim.blectl(["scan", "--count", "10", "--timeout", "60"])
            #expect(piped.status == 0)
            #expect(piped.stderr == "")
        }
    }
}
