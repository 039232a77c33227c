// stdout that is not an ordinary blocking pipe: one left O_NONBLOCK by whoever shares it
// (EAGAIN when full means "wait", not "the reader went away"), and one that fails (a full
// disk: ENOSPC, EIO), which is an I/O error of its own, 74 (EX_IOERR), not SIGPIPE's 141.

import SimulatorHarness
import Testing

@Suite("stdout non-blocking or failing")
struct StdoutErrorTests {
    /// A Python reader for `blectl ARGS`: stdout is a one-page pipe set O_NONBLOCK; the reader
    /// reads nothing until blectl waits for room (a thread of it in poll(2) on one fd without
    /// timeout) or has ended, then reads everything. It prints what it read, says on stderr
    /// which came first, and exits with blectl's status (128 + signal when killed).
    static let slowReader = #"""
    import fcntl, glob, os, subprocess, sys, time
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page
    fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)
    child = subprocess.Popen(sys.argv[1:], stdout=w)
    os.close(w)
    def waiting_for_room(pid):
        for path in glob.glob(f"/proc/{pid}/task/*/syscall"):
            try:
                fields = open(path).read().split()
            except OSError:
                continue
            if fields[:1] == ["7"] and fields[2] == "0x1" and fields[3] in ("0xffffffff", "0xffffffffffffffff"):
                return True
        return False
    deadline = time.monotonic() + 30
    while child.poll() is None and not waiting_for_room(child.pid) and time.monotonic() < deadline:
        time.sleep(0.005)
    print("reader: " + ("blectl waited for room" if child.poll() is None else "blectl ended first"), file=sys.stderr, flush=True)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
    status = child.wait()
    sys.exit(status if status >= 0 else 128 - status)
    """#

    @Test("scan into a full non-blocking pipe: blectl waits for the reader, every line arrives, 0")
    func nonBlockingPipe() async throws {
        try await Sim.with(faults: ["advertisers": "100"]) { sim in
            let arguments = ["scan", "--count", "110", "--timeout", "60"]
            let simulator = sim.simulator
            let r = try await offThread {
                simulator.run("/usr/bin/python3", ["-c", Self.slowReader, BlectlBinary.path] + arguments, timeout: .seconds(60))
            }
            let run = Run(arguments: arguments, status: r.status, stdout: r.stdout, stderr: r.stderr)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "reader: blectl waited for room\n", "\(run)")
            let addresses = run.jsonLines().compactMap { $0["address"]?.string }
            #expect(addresses.count == 110, "\(run)")
            #expect(Set(addresses).count == addresses.count, "a line twice: \(run)")
            #expect(Set(World.known + World.fillers).isSubset(of: Set(addresses)), "\(run)")
            try await sim.expectClean()
        }
    }

    /// `blectl ARGS >/dev/full` under bash.
    static func intoDevFull(_ sim: Sim, _ arguments: [String]) async -> Run {
        let simulator = sim.simulator
        let r = (try? await offThread {
            simulator.run("/bin/bash", ["-c", "\"$0\" \"$@\" >/dev/full", BlectlBinary.path] + arguments, timeout: .seconds(30))
        }) ?? (status: -1, stdout: "", stderr: "")
        return Run(arguments: arguments, status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    static let enospc = "cannot write to standard output: No space left on device (ENOSPC)"

    @Test("adapters >/dev/full: 74 io_error naming ENOSPC, not 141")
    func devFullJSON() async throws {
        try await Sim.with { sim in
            let run = await Self.intoDevFull(sim, ["adapters"])
            #expect(run.status == 74, "\(run)")
            #expect(run.stdout == "")
            #expect(run.jsonError() == ["code": "io_error", "exit_status": 74, "retryable": false, "message": .string(Self.enospc),
                                        "operation": .null, "address": .null, "service": .null, "characteristic": .null,
                                        "dbus_error": .null], "\(run)")
        }
    }

    @Test("connect >/dev/full: the connection is closed, then 74")
    func devFullConnect() async throws {
        try await Sim.with { sim in
            let run = await Self.intoDevFull(sim, ["--format", "text", "connect", World.probe])
            #expect(run.status == 74, "\(run)")
            #expect(run.stderr == "blectl: error: \(Self.enospc)\n", "\(run)")
            try #expect(await sim.calls().contains { $0.member == "Disconnect" }, "blectl never disconnected")
            try await sim.expectClean()
        }
    }

    @Test("--help and --version >/dev/full: 74 naming ENOSPC", arguments: [["--help"], ["--version"], ["help", "scan"]])
    func devFullHelp(_ arguments: [String]) async throws {
        try await Sim.with { sim in
            let run = await Self.intoDevFull(sim, arguments)
            #expect(run.status == 74, "\(run)")
            #expect(run.stderr == "blectl: error: \(Self.enospc)\n", "\(run)")
        }
    }

    /// `blectl ARGS >&-`: standard output closed. Its descriptor must not be reused by the bus
    /// connection (results written into the D-Bus socket): writing fails EBADF, 74 io_error.
    @Test("stdout closed (>&-): 74 io_error naming EBADF, the connection closed, nothing left",
          arguments: [["adapters"], ["connect", World.probe], ["get-battery", World.probe]])
    func closedStdout(_ arguments: [String]) async throws {
        try await Sim.with { sim in
            let simulator = sim.simulator
            let r = try await offThread {
                simulator.run("/bin/bash", ["-c", "\"$0\" \"$@\" >&-", BlectlBinary.path] + arguments, timeout: .seconds(30))
            }
            let run = Run(arguments: arguments, status: r.status, stdout: r.stdout, stderr: r.stderr)
            #expect(run.status == 74, "\(run)")
            #expect(run.jsonError()?["message"] == .string("cannot write to standard output: Bad file descriptor (EBADF)"), "\(run)")
            try await sim.expectClean()
        }
    }
}
