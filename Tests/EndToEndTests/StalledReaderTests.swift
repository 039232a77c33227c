// A reader that stops reading stdout (a slow consumer, a paused pipeline) must not hold the
// command: the scan ends at its timeout and stops discovery, a signal still ends blectl at
// once, and what reaches the reader is whole JSON lines (found on the real bluetoothd:
// `scan --updates | (sleep 32; wc -l)` used to scan on for 32 s and ignore a first SIGINT).
//
// "At once" is checked by order, not by a clock: the reader reads nothing until blectl has
// done what is asked (ended, or stopped discovery), so a blectl held by its stdout could
// not do it. How long it takes is the benchmarks' business (bench/, Ctrl-C).

import Foundation
import SimulatorHarness
import Testing

@Suite struct StalledReaderTests {
    /// 2,000 advertisers changing RSSI: output comes faster than the stalled pipe takes.
    static let busy = ["advertisers": "2000", "rssi_churn": "true"]

    /// Runs blectl with stdout a one-page pipe (F_SETPIPE_SZ 4096) that nobody reads, and
    /// waits until blectl is stalled on it: the pipe takes no more (no POLLOUT on its write
    /// end) and, where /proc tells, a thread of blectl sleeps in pipe_write. Then writes
    /// "stalled" on stderr and, with `signal`, sends SIGINT and waits (60 s at most) for
    /// blectl to end, reading nothing; with `release`, waits for a line on its stdin. Then
    /// reads everything blectl wrote, prints it, and writes on stderr
    /// "status=N ended=E ms=M": E is `unread` when blectl had ended before anything was read,
    /// `running` when it was still running when told to read (release), `held` when it did
    /// not end within the 60 s (signal); M the milliseconds from SIGINT to the end (shown,
    /// not checked).
    static let stalledReader = """
        import fcntl, glob, os, select, signal, subprocess, sys, time
        mode = sys.argv[1]
        r, w = os.pipe()
        fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
        p = subprocess.Popen(sys.argv[2:], stdout=w)
        probe = select.poll()
        probe.register(w, select.POLLOUT)

        def writer_asleep():
            seen = False
            for task in glob.glob(f"/proc/{p.pid}/task/*"):
                try:
                    with open(task + "/wchan") as f:
                        wchan = f.read().strip()
                except OSError:
                    continue
                if "pipe_write" in wchan:
                    return True
                seen = seen or wchan not in ("", "0")
            return not seen  # /proc does not say: the full pipe is the evidence

        while p.poll() is None and not (probe.poll(0) == [] and writer_asleep()):
            time.sleep(0.01)
        os.close(w)
        sys.stderr.write("stalled\\n" if p.poll() is None else f"ended before stalling: {p.returncode}\\n")
        sys.stderr.flush()
        ms = -1
        if mode == "signal":
            p.send_signal(signal.SIGINT)
            t = time.monotonic()
            try:
                p.wait(timeout=60)
                ended = "unread"
                ms = int((time.monotonic() - t) * 1000)
            except subprocess.TimeoutExpired:
                ended = "held"
        else:
            sys.stdin.readline()
            ended = "running" if p.poll() is None else "unread"
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        p.wait()
        sys.stdout.buffer.write(data)
        status = 128 - p.returncode if p.returncode < 0 else p.returncode
        sys.stderr.write(f"status={status} ended={ended} ms={ms}\\n")
        """

    struct Report: Equatable, CustomStringConvertible {
        let status: Int
        let ended: String
        var description: String { "status=\(status) ended=\(ended)" }
    }

    func runStalled(_ sim: Sim, _ mode: String, _ arguments: [String]) async throws -> RunningProcess {
        let simulator = sim.simulator
        let args = ["-c", Self.stalledReader, mode, BlectlBinary.path] + arguments
        return try await offThread { try simulator.launch("/usr/bin/python3", args, stdinPipe: true) }
    }

    static func report(_ stderr: String) -> Report? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.hasPrefix("status=") }) else { return nil }
        let fields = Dictionary(line.split(separator: " ").compactMap { field -> (String, String)? in
            let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
            return parts.count == 2 ? (parts[0], parts[1]) : nil
        }, uniquingKeysWith: { $1 })
        guard let status = fields["status"].flatMap({ Int($0) }), let ended = fields["ended"] else { return nil }
        return Report(status: status, ended: ended)
    }

    static func brokenLines(_ stdout: String) -> [Substring] {
        stdout.split(separator: "\n").filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }
    }

    /// The scan's 5 s end (long enough for the set-up and a stall on a loaded machine)
    /// while nothing is read: discovery is stopped (StopDiscovery
    /// answered, no session left) with blectl still waiting to hand its queued lines to the
    /// reader, which then gets them all, whole.
    @Test func scanEndsAtItsTimeoutWhileTheReaderSleeps() async throws {
        try await Sim.with(faults: Self.busy) { sim in
            let process = try await runStalled(sim, "release", ["scan", "--updates", "--timeout", "5"])
            let stalled = try await offThread { process.waitForStderr(containing: "stalled\n", timeout: .seconds(60)) }
            #expect(stalled, "blectl never stalled on its stdout: \(process.currentStderr)")
            let stopped = try await sim.waitForState(timeout: .seconds(60)) { state in
                state.discoverySessions.isEmpty && state.pendingStartDiscovery.isEmpty && !state.discovering
            }
            #expect(stopped, "discovery still running while stdout is stalled")
            let stopCalls = try await sim.calls().filter { $0.member == "StopDiscovery" }.map(\.outcome)
            #expect(stopCalls == ["reply"], "discovery not stopped by blectl itself")
            process.writeStdin("read\n")
            let result = try await process.finish(timeout: .seconds(90))
            #expect(Self.report(result.stderr) == Report(status: 0, ended: "running"), "\(result.stderr)")
            // More than the pipe holds: blectl had to wait for the reader.
            #expect(result.stdout.utf8.count > 4096, "only \(result.stdout.utf8.count) bytes: the reader was never stalled")
            #expect(Self.brokenLines(result.stdout).isEmpty, "\(Self.brokenLines(result.stdout).prefix(3))")
            try await sim.expectClean()
        }
    }

    /// SIGINT while stdout is stalled ends a 600 s scan by SIGINT before the reader has read
    /// a byte; what it had written is whole lines; discovery was stopped by blectl.
    @Test func firstSignalEndsAStalledScanAtOnce() async throws {
        try await Sim.with(faults: Self.busy) { sim in
            let process = try await runStalled(sim, "signal", ["scan", "--updates", "--timeout", "600"])
            let result = try await process.finish(timeout: .seconds(120))
            #expect(result.stderr.hasPrefix("stalled\n"), "blectl never stalled on its stdout: \(result.stderr)")
            // Before the fix blectl could not end at all while nobody read: `held`.
            #expect(Self.report(result.stderr) == Report(status: 130, ended: "unread"), "\(result.stderr)")
            #expect(!result.stdout.isEmpty)
            #expect(Self.brokenLines(result.stdout).isEmpty, "\(Self.brokenLines(result.stdout).prefix(3))")
            try #expect(await sim.calls().filter { $0.member == "StopDiscovery" }.count == 1, "discovery not stopped by blectl")
            try await sim.scenarioExpectClean()
        }
    }
}
