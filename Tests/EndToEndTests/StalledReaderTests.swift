// A reader that stops reading stdout (a slow consumer, a paused pipeline) must not hold the
// command: the scan ends at its timeout and stops discovery, a signal still ends blectl at
// once, and what reaches the reader is whole JSON lines (found on the real bluetoothd:
// `scan --updates | (sleep 32; wc -l)` used to scan on for 32 s and ignore a first SIGINT).

import Foundation
import SimulatorHarness
import Testing

@Suite struct StalledReaderTests {
    /// 2,000 advertisers changing RSSI: output comes faster than the stalled pipe takes.
    static let busy = ["advertisers": "2000", "rssi_churn": "true"]

    /// Runs blectl with stdout a one-page pipe (F_SETPIPE_SZ 4096, so that it is full after
    /// a few lines whatever blectl's speed, sanitizers included) that nobody reads for
    /// `stall` seconds; with `signalAfter`, SIGINT then, and the milliseconds blectl took to
    /// end reported. Prints what blectl wrote, and "status=N ms=M" on stderr.
    static let stalledReader = """
        import fcntl, os, signal, subprocess, sys, time
        stall, signal_after = float(sys.argv[1]), float(sys.argv[2])
        r, w = os.pipe()
        fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
        p = subprocess.Popen(sys.argv[3:], stdout=w)
        os.close(w)
        ms = -1
        if signal_after > 0:
            time.sleep(signal_after)
            p.send_signal(signal.SIGINT)
            t = time.monotonic()
            try:
                p.wait(timeout=10)
                ms = int((time.monotonic() - t) * 1000)
            except subprocess.TimeoutExpired:
                pass
        time.sleep(stall)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        p.wait()
        sys.stdout.buffer.write(data)
        status = 128 - p.returncode if p.returncode < 0 else p.returncode
        sys.stderr.write(f"status={status} ms={ms}\\n")
        """

    func runStalled(_ sim: Sim, stall: Double, signalAfter: Double, _ arguments: [String]) async throws -> RunningProcess {
        let simulator = sim.simulator
        let args = ["-c", Self.stalledReader, String(stall), String(signalAfter), BlectlBinary.path] + arguments
        return try await offThread { try simulator.launch("/usr/bin/python3", args) }
    }

    static func report(_ stderr: String) -> (status: Int, ms: Int)? {
        guard let line = stderr.split(separator: "\n").last(where: { $0.hasPrefix("status=") }) else { return nil }
        let fields = line.split(separator: " ").map { $0.split(separator: "=").last.map(String.init) ?? "" }
        guard fields.count == 2, let status = Int(fields[0]), let ms = Int(fields[1]) else { return nil }
        return (status, ms)
    }

    static func brokenLines(_ stdout: String) -> [Substring] {
        stdout.split(separator: "\n").filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }
    }

    @Test func scanEndsAtItsTimeoutWhileTheReaderSleeps() async throws {
        try await Sim.with(faults: Self.busy) { sim in
            let process = try await runStalled(sim, stall: 7, signalAfter: 0, ["scan", "--updates", "--timeout", "2.5"])
            // The scan's 2.5 s are over (with room for a slow start); nothing has been read.
            await pause(.seconds(5))
            let state = try await sim.state()
            #expect(state.discovering == false, "discovery still running while stdout is stalled")
            #expect(state.leftovers == [], "\(state.leftovers)")
            let result = try await process.finish(timeout: .seconds(30))
            #expect(Self.report(result.stderr)?.status == 0, "\(result.stderr)")
            // More than the pipe holds: blectl had to wait for the reader.
            #expect(result.stdout.utf8.count > 4096, "only \(result.stdout.utf8.count) bytes: the reader was never stalled")
            #expect(Self.brokenLines(result.stdout).isEmpty, "\(Self.brokenLines(result.stdout).prefix(3))")
        }
    }

    @Test func firstSignalEndsAStalledScanAtOnce() async throws {
        try await Sim.with(faults: Self.busy) { sim in
            let process = try await runStalled(sim, stall: 1, signalAfter: 2.5, ["scan", "--updates", "--timeout", "30"])
            let result = try await process.finish(timeout: .seconds(30))
            let report = Self.report(result.stderr)
            #expect(report?.status == 130, "\(result.stderr)")
            #expect((report?.ms ?? .max) >= 0 && (report?.ms ?? .max) < 2000, "blectl took \(report?.ms ?? -1) ms to end after SIGINT")
            // What was in the pipe when blectl died: whole lines (before the fix it could not
            // die at all: `ms` stayed -1 while nobody read).
            #expect(!result.stdout.isEmpty)
            #expect(Self.brokenLines(result.stdout).isEmpty, "\(Self.brokenLines(result.stdout).prefix(3))")
            try await sim.scenarioExpectClean()
        }
    }
}
