// The system bus dies (the dbus-daemon is SIGKILLed) while blectl waits on it: the
// connection hangs up, and every call and wait must fail at once: exit 69 with the JSON
// error object, within seconds, whatever blectl was waiting for.

import Foundation
import SimulatorHarness
import Testing

@Suite("the bus connection hangs up")
struct BusLossTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var faults: [String: String]
        var arguments: [String]
        /// blectl's address in the error object (nil for scan).
        var address: String?
        /// When to kill the bus: blectl is waiting on this.
        var ready: @Sendable (SimState) -> Bool
        /// And, when given, on this in the simulator's call log (a call answered).
        var readyCalls: (@Sendable ([SimCall]) -> Bool)? = nil
        /// The stage the error names.
        var operation: String
        var testDescription: String { label }
    }

    /// Whether a `member` call was answered.
    static func answered(_ member: String) -> @Sendable ([SimCall]) -> Bool {
        { calls in calls.contains { $0.member == member && $0.outcome == "reply" } }
    }

    static let cases: [Case] = [
        Case(label: "during a scan (after the first line)", faults: [:], arguments: ["scan", "--timeout", "30"], address: nil,
             ready: { !$0.discoverySessions.isEmpty }, operation: "discovery"),
        Case(label: "during a connect (Connect unanswered)", faults: ["connect_never_answers": "1"],
             arguments: ["connect", World.probe, "--timeout", "30"], address: World.probe,
             ready: { $0.pendingConnects.contains(World.probe) }, operation: "connect"),
        Case(label: "during a read (ReadValue unanswered)", faults: ["read_never_answers": "1"],
             arguments: ["get-version", World.probe, "--timeout", "30"], address: World.probe,
             ready: { $0.pendingGATT.contains { $0.op == "ReadValue" } }, operation: "read"),
        Case(label: "during notification setup (StartNotify unanswered)", faults: ["start_notify_never_answers": "1"],
             arguments: ["get-battery", World.vendor, "--timeout", "30"] + World.vendorOptions, address: World.vendor,
             ready: { $0.pendingGATT.contains { $0.op == "StartNotify" } }, operation: "notification_setup"),
        // Values streaming (found by the breaker trial: the error named no stage).
        Case(label: "during notifications (values streaming)", faults: ["notify_every_ms": "50", "notify_every_char": "2a19"],
             arguments: ["notify", World.gattBattery, "2a19", "--timeout", "30"], address: World.gattBattery,
             ready: { !$0.notifySessions.isEmpty }, operation: "notifications"),
        // Found by this session's breaker: these two named no stage ("operation": null), and
        // write --file said bluetoothd had left.
        Case(label: "during a request (waiting for the response)", faults: ["no_notification": "1"],
             arguments: ["request", World.vendor, "01", "--write", World.vendorWrite, "--notify", World.vendorNotify,
                         "--response-prefix", "81", "--timeout", "30"], address: World.vendor,
             ready: { !$0.notifySessions.isEmpty }, readyCalls: answered("WriteValue"), operation: "response"),
        Case(label: "during write --file (values streaming)", faults: ["echo_device": "1", "acquire_write_drain_bps": "4000"],
             arguments: ["write", WriteFileTests.echo, WriteFileTests.sink, "--without-response", "--file", BusLossTests.bigFile,
                         "--timeout", "30"], address: WriteFileTests.echo,
             ready: { !$0.connections.isEmpty }, readyCalls: answered("AcquireWrite"), operation: "write"),
    ]

    /// 256 KiB for write --file: at the simulator's 4,000 B/s, a minute of streaming (removed
    /// by the case that uses it).
    static let bigFile: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-busloss-\(getpid()).bin").path
        precondition(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x5a, count: 256 * 1024)), "cannot write \(path)")
        return path
    }()

    /// How long blectl may take to notice: far more than it needs, far less than its timeout.
    static let hangLimit: Duration = .seconds(10)

    @Test("bus daemon killed: exit 69 with the error object, no hang", arguments: cases)
    func busKilled(_ c: Case) async throws {
        defer { if c.arguments.contains(Self.bigFile) { unlink(Self.bigFile) } }   // the one case that uses it
        try await Sim.with(faults: c.faults) { sim in
            let busPID = try await sim.busProcessID()
            let blectl = try await sim.launch(c.arguments)
            let ready = try await sim.waitForState(timeout: .seconds(15), c.ready)
            try #require(ready, "blectl never got to the point: \(blectl.currentStdout) \(blectl.currentStderr)")
            if let readyCalls = c.readyCalls {
                let deadline = ContinuousClock.now + .seconds(15)
                while try await !readyCalls(sim.calls()), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                try #require(try await readyCalls(sim.calls()), "blectl never got to the point: \(blectl.currentStderr)")
            }
            if c.address == nil || c.operation == "notifications" {
                #expect(await blectl.stdoutContains("\n", within: .seconds(30)), "no line before the kill")
            }
            try await sim.killBus(busPID)
            #expect(sim.simulator.isRunning == false, "the simulator outlived its bus")

            let result = try await blectl.finish(timeout: Self.hangLimit)
            let run = Run(arguments: c.arguments, result: result)
            #expect(!result.timedOut, "blectl still running \(Self.hangLimit) after the bus died: \(run)")
            #expect(run.status == 69, "\(run)")
            if c.address == nil {
                // Lines printed before the bus died stay valid records.
                let addresses = run.jsonLines().compactMap { $0["address"]?.string }
                #expect(!addresses.isEmpty && Set(addresses).isSubset(of: Set(World.known + World.fillers)), "\(run)")
            } else if c.operation != "notifications" {
                #expect(run.stdout == "", "\(run)")
            }
            let error = try #require(run.jsonError())
            #expect(topLevelKeys(String(run.stderr.dropFirst("{\"error\":".count))) == World.errorKeys, "\(run.stderr)")
            #expect(error["code"] == "unavailable", "\(run)")
            #expect(error["exit_status"] == 69)
            #expect(error["operation"] == .string(c.operation), "\(run)")
            #expect(error["address"] == (c.address.map(J.string) ?? .null))
            // What happened: the bus connection was lost (not bluetoothd leaving, not a timeout).
            let message = error["message"]?.string ?? ""
            #expect(message.contains("system bus") && !message.contains("bluetoothd"), "\(error)")
        }
    }
}
