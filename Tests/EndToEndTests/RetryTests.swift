// `--retries N`: a transient failure (the error object's retryable true) tried again with a
// pause, within --timeout, each attempt cleaned up; a failure that is not transient, or a
// write that may have reached the device, never again.

import Foundation
import SimulatorHarness
import Testing

@Suite("--retries")
struct RetryTests {
    struct Command: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var faults: [String: String] = [:]
        var testDescription: String { arguments.first ?? "" }
    }

    /// The commands that take --retries, each on a device it succeeds on.
    static let commands: [Command] = [
        Command(arguments: ["get-battery", World.probe]),
        Command(arguments: ["get-version", World.probe]),
        Command(arguments: ["read", World.gattBattery, "2a19"]),
        Command(arguments: ["connect", World.probe]),
        Command(arguments: ["write", World.toolbox, World.toolboxText, "6869"], faults: World.toolboxFaults),
        Command(arguments: ["request", World.vendor, "--write", World.vendorWrite, "--notify", World.vendorNotify, "01"]),
    ]

    @Test("one Connect aborted by the remote side: --retries 2 connects again and succeeds, nothing left", arguments: commands)
    func succeedsAfterOneTransientFailure(_ c: Command) async throws {
        try await Sim.with(faults: c.faults.merging(["connect_fail_once": "le-connection-abort-by-remote"]) { $1 }) { sim in
            let run = await sim.blectl(c.arguments + ["--retries", "2"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "", "\(run)")
            #expect(!run.stdout.isEmpty)
            let connects = try await sim.calls().filter { $0.member == "Connect" }
            #expect(connects.map(\.outcome) == ["error:org.bluez.Error.Failed", "reply"], "\(connects)")
            try await sim.expectClean()
        }
    }

    @Test("the same failure without --retries (0): exit 1, connection_aborted, retryable, one Connect", arguments: [
        ["get-battery", World.probe], ["get-battery", World.probe, "--retries", "0"],
    ])
    func notRetriedByDefault(_ arguments: [String]) async throws {
        try await Sim.with(faults: ["connect_fail_once": "le-connection-abort-by-remote"]) { sim in
            let run = await sim.blectl(arguments)
            #expect(run.status == 1, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "connection_aborted")
            #expect(error["retryable"] == true)
            #expect(error["dbus_error"] == "org.bluez.Error.Failed")
            #expect(error["message"] == "connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: le-connection-abort-by-remote")
            try #expect(await sim.calls().filter { $0.member == "Connect" }.count == 1)
            try await sim.expectClean()
        }
    }

    @Test("--format text: the transient failure's line says trying again may help")
    func textHint() async throws {
        try await Sim.with(faults: ["connect_fail_once": "le-connection-abort-by-remote"]) { sim in
            let run = await sim.blectl(["get-battery", World.probe, "--format", "text"])
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr == "blectl: error: connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: "
                        + "le-connection-abort-by-remote (transient: trying again may succeed)\n")
        }
    }

    /// BlueZKit itself connects again after "le-connection-abort-by-local" (3 attempts);
    /// --retries adds rounds of its own.
    @Test("the link aborted locally under three Connects: --retries 1 makes a fourth, which succeeds")
    func beyondTheLibrarysOwnAttempts() async throws {
        try await Sim.with(faults: ["connect_abort_times": "3"]) { sim in
            let without = await sim.blectl(["get-battery", World.probe])
            #expect(without.status == 1, "\(without)")
            #expect(without.jsonError()?["code"] == "connection_aborted")
            try await sim.setFault("connect_abort_times", "3")
            let run = await sim.blectl(["get-battery", World.probe, "--retries", "1"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == ["address": .string(World.probe), "percentage": 87, "source": "battery1"])
            let outcomes = try await sim.calls().filter { $0.member == "Connect" }.map(\.outcome)
            #expect(outcomes == Array(repeating: "error:org.bluez.Error.Failed", count: 6) + ["reply"], "\(outcomes)")
            try await sim.expectClean()
        }
    }

    struct Permanent: Sendable, CustomTestStringConvertible {
        var label: String
        var faults: [String: String]
        var arguments: [String]
        var code: String
        /// The call that failed, made once.
        var member: String
        var testDescription: String { label }
    }

    @Test("a failure that is not transient is not tried again: retryable false, one attempt", arguments: [
        Permanent(label: "keys missing (le-connection-key-missing)", faults: ["connect_fail": "le-connection-key-missing"],
                  arguments: ["get-battery", World.probe], code: "bluez_failed", member: "Connect"),
        Permanent(label: "wants pairing (NotPermitted)", faults: World.toolboxFaults,
                  arguments: ["read", World.toolbox, World.toolboxSecure], code: "not_permitted", member: "ReadValue"),
        Permanent(label: "no Device Information service", faults: [:], arguments: ["get-version", World.battery1],
                  code: "not_supported", member: "Connect"),
        // A write the link dropped under may have reached the device: never written twice.
        Permanent(label: "the link lost during a write (drop_link_on WriteValue)", faults: World.toolboxFaults.merging(["drop_link_on": "WriteValue"]) { $1 },
                  arguments: ["write", World.toolbox, World.toolboxText, "6869"], code: "disconnected", member: "WriteValue"),
    ])
    func permanentFailureNotRetried(_ c: Permanent) async throws {
        try await Sim.with(faults: c.faults) { sim in
            let run = await sim.blectl(c.arguments + ["--retries", "3"])
            #expect(run.status != 0, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == .string(c.code), "\(run)")
            #expect(error["retryable"] == false)
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == c.member }.count == 1, "\(calls.map(\.member))")
            #expect(calls.filter { $0.member == "Connect" }.count == 1, "\(calls.map(\.member))")
            try await sim.expectClean()
        }
    }

    @Test("a link lost during a read, twice: --retries 1 reads on a second link, and the failure after it is reported; nothing left")
    func linkLostEveryTime() async throws {
        try await Sim.with(faults: ["disconnect_mid_read": "1"]) { sim in
            let run = await sim.blectl(["read", World.gattBattery, "2a19", "--retries", "1"])
            #expect(run.status == 4, "\(run)")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "disconnected")
            #expect(error["retryable"] == true)
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "Connect" }.map(\.outcome) == ["reply", "reply"], "\(calls.map(\.member))")
            #expect(calls.filter { $0.member == "ReadValue" }.count == 2)
            try await sim.expectClean()
        }
    }

    @Test("every Connect aborted: --retries 1000 stops within --timeout, pausing 0.25 s, 0.5 s, 1 s, ...; the last failure reported")
    func withinTheTimeout() async throws {
        try await Sim.with(faults: ["connect_fail": "le-connection-abort-by-remote"]) { sim in
            let started = ContinuousClock.now
            let run = await sim.blectl(["get-battery", World.probe, "--retries", "1000", "--timeout", "3"])
            let elapsed = ContinuousClock.now - started
            #expect(run.status == 1, "\(run)")
            #expect(run.jsonError()?["code"] == "connection_aborted", "\(run)")
            // Stopped by the retry policy, not by the deadline: at the deadline blectl says
            // timed_out (124), so the status above is the "within --timeout" check, on
            // blectl's own clock. Each Connect fails 100 ms after it is sent; after the
            // pauses of 0.25, 0.5 and 1 s the next (2 s) no longer fits: at most four
            // Connects, fewer when start-up took longer (a loaded machine, a sanitizer).
            let connects = try await sim.calls().filter { $0.member == "Connect" }.count
            #expect((2...4).contains(connects), "\(connects) Connects")
            // A hang detector only: no machine keeps a tighter wall-clock bound.
            #expect(elapsed < .seconds(20), "\(elapsed)")
            try await sim.expectClean()
        }
    }
}
