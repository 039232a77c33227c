// The simulator's own tools, as a new user meets them: `--help` helps (usage, status 0,
// nothing started or stopped), sim/start and sim/stop keep their state per clone and user
// (a second clone's sim/stop leaves the first one's simulator alone), and sim/simctl ends
// quietly when its reader has gone.

import Foundation
import SimulatorHarness
import Testing

@Suite("sim/ tools: --help, state per clone, closed stdout")
struct SimToolsTests {
    /// A scratch directory for one test, removed afterwards.
    static func withScratch<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-simtools-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    /// `script` under bash in `sim`'s repository root, with XDG_RUNTIME_DIR set to
    /// `runtime` (so that nothing here touches the state of a simulator someone started
    /// by hand) and no BLESIM_STATE_DIR.
    static func bash(_ sim: Sim, _ script: String, runtime: String) async -> Run {
        let simulator = sim.simulator
        let root = simulator.repoRoot.path
        let r = (try? await offThread {
            simulator.run("/bin/bash", ["-c", "cd \"$0\" && unset BLESIM_STATE_DIR && " + script, root],
                          environment: ["XDG_RUNTIME_DIR": runtime], timeout: .seconds(60))
        }) ?? (status: -1, stdout: "", stderr: "")
        return Run(arguments: [script], status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    @Test("--help: usage on stdout, status 0, nothing run", arguments: [
        "sim/start", "sim/stop", "sim/simctl", "sim/bluez-sim", "sim/impostor", "sim/smoke/run",
        "sim/smoke/bluetoothctl-smoke.sh", "/usr/bin/python3 sim/smoke/bleak_smoke.py",
    ])
    func help(_ tool: String) async throws {
        try await Self.withScratch { runtime in
            try await Sim.with { sim in
                // A process where the old shared pid file would point: --help must not stop
                // it, nor start anything (the runtime directory stays as it was).
                let script = """
                    sleep 60 & sleeper=$!; echo $sleeper >"$XDG_RUNTIME_DIR/blesim.pid"
                    \(tool) --help >"$XDG_RUNTIME_DIR/out"; status=$?
                    kill -0 $sleeper 2>/dev/null && echo "sleeper alive" || echo "sleeper stopped"; kill $sleeper 2>/dev/null
                    ls -A "$XDG_RUNTIME_DIR"; cat "$XDG_RUNTIME_DIR/out"; exit $status
                    """
                let run = await Self.bash(sim, script, runtime: runtime)
                #expect(run.status == 0, "\(run)")
                #expect(run.stdout.hasPrefix("sleeper alive\nblesim.pid\nout\n"), "\(run)")
                #expect(run.stdout.drop { $0 != "\n" }.dropFirst().drop { $0 != "\n" }.dropFirst().drop { $0 != "\n" }.dropFirst()
                            .lowercased().hasPrefix("usage: "), "\(run)")
                #expect(!run.stdout.contains("== bluetoothctl"), "the smoke tests ran: \(run)")
                #expect(run.stderr == "", "\(run)")
            }
        }
    }

    @Test("sim/start with an unknown argument: usage on stderr, status 2, nothing started")
    func startUnknownArgument() async throws {
        try await Self.withScratch { runtime in
            try await Sim.with { sim in
                let run = await Self.bash(sim, "sim/start --frobnicate", runtime: runtime)
                #expect(run.status == 2, "\(run)")
                #expect(run.stdout == "", "\(run)")
                #expect(run.stderr.hasPrefix("sim/start: unknown argument '--frobnicate'\nUsage: "), "\(run)")
            }
        }
    }

    /// Two clones of the repository on one machine, one user: each sim/stop stops its own
    /// clone's simulator only.
    @Test("a second clone's sim/stop leaves the first clone's simulator running")
    func statePerClone() async throws {
        try await Self.withScratch { scratch in
            try await Sim.with { sim in
                let runtime = scratch + "/run"
                let script = """
                    set -u
                    mkdir -p "$XDG_RUNTIME_DIR" "\(scratch)/a" "\(scratch)/b"
                    cp -R sim "\(scratch)/a/sim" && cp -R sim "\(scratch)/b/sim"
                    eval "$("\(scratch)/a/sim/start")" || exit 10
                    a=$BLESIM_PID
                    "\(scratch)/b/sim/stop" >/dev/null 2>"\(scratch)/b-stop.err"
                    if kill -0 "$a" 2>/dev/null; then echo "a alive after b's stop"; else echo "a stopped by b's stop"; fi
                    cat "\(scratch)/b-stop.err"
                    "\(scratch)/a/sim/stop"
                    for _ in $(seq 1 40); do kill -0 "$a" 2>/dev/null || break; sleep 0.05; done
                    if kill -0 "$a" 2>/dev/null; then kill "$a"; echo "a alive after its own stop"; else echo "a stopped by its own stop"; fi
                    """
                let run = await Self.bash(sim, script, runtime: runtime)
                #expect(run.status == 0, "\(run)")
                let lines = run.stdout.split(separator: "\n").map(String.init)
                #expect(lines.count == 4, "\(run)")
                #expect(lines.first == "a alive after b's stop", "\(run)")
                #expect(lines.dropFirst().first?.hasPrefix("sim/stop: no simulator of this clone is running (no ") == true, "\(run)")
                #expect(Array(lines.suffix(2)) == ["unset DBUS_SYSTEM_BUS_ADDRESS BLESIM_PID", "a stopped by its own stop"], "\(run)")
            }
        }
    }

    /// stdout a pipe whose reader is gone before the tool writes (the read end closed before
    /// it starts): it ends by SIGPIPE (141), no traceback.
    @Test("sim/simctl and sim/blectl-sim into a closed pipe: end by SIGPIPE, nothing on stderr",
          arguments: ["sim/simctl state", "sim/blectl-sim faults", "sim/blectl-sim --help"])
    func simToolClosedPipe(command: String) async throws {
        try await Self.withScratch { runtime in
            try await Sim.with { sim in
                let script = """
                    exec /usr/bin/python3 -c '
                    import os, subprocess, sys
                    r, w = os.pipe()
                    os.close(r)
                    status = subprocess.run(sys.argv[1:], stdout=w).returncode
                    sys.exit(status if status >= 0 else 128 - status)
                    ' \(command)
                    """
                let run = await Self.bash(sim, script, runtime: runtime)
                #expect(run.status == 141, "\(run)")
                #expect(run.stderr == "", "\(run)")
            }
        }
    }
}

/// `make deps` on a machine where another apt holds the lock (unattended-upgrades at boot):
/// scripts/apt-get-waiting tries again while apt-get says "Could not get lock", and passes
/// other failures through at once. A fake apt-get on PATH stands in for the real one.
@Suite("make deps: waiting for another apt's lock")
struct AptLockTests {
    static func run(failures: Int, message: String) async throws -> Run {
        try await SimToolsTests.withScratch { scratch in
            try await Sim.with { sim in
                let fake = """
                    #!/bin/bash
                    n=$(($(cat "\(scratch)/calls" 2>/dev/null || echo 0) + 1)); echo $n >"\(scratch)/calls"
                    if ((n <= \(failures))); then echo "\(message)" >&2; exit 100; fi
                    echo "apt-get $*"
                    """
                // Written by the shell, not this (threaded) process: an exec while another
                // thread's fork holds the file open for writing fails with ETXTBSY.
                let script = """
                    cat >"\(scratch)/apt-get" <<'FAKE'
                    \(fake)
                    FAKE
                    chmod +x "\(scratch)/apt-get"
                    PATH="\(scratch):$PATH" APT_LOCK_TIMEOUT=60 APT_LOCK_RETRY=0.1 scripts/apt-get-waiting install -y pkg-config
                    status=$?; echo "calls $(cat "\(scratch)/calls")"; exit $status
                    """
                return await SimToolsTests.bash(sim, script, runtime: scratch)
            }
        }
    }

    @Test("the lock held for two tries: waits, then installs with DPkg::Lock::Timeout")
    func lockHeld() async throws {
        let lock = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)"
        let run = try await Self.run(failures: 2, message: lock)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "apt-get -o DPkg::Lock::Timeout=60 install -y pkg-config\ncalls 3\n", "\(run)")
        let notice = "apt-get-waiting: another apt holds the lock; trying again in 0.1 s (for up to 60 s)"
        #expect(run.stderr == "\(lock)\n\(notice)\n\(lock)\n\(notice)\n", "\(run)")
    }

    @Test("another failure: its status at once, no retry")
    func otherFailure() async throws {
        let run = try await Self.run(failures: 5, message: "E: Unable to locate package pkg-config")
        #expect(run.status == 100, "\(run)")
        #expect(run.stdout == "calls 1\n", "\(run)")
        #expect(run.stderr == "E: Unable to locate package pkg-config\n", "\(run)")
    }
}
