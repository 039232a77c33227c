// `blectl request`: the vendor protocol in general. Subscribe, write, take the first N
// notifications that start with the prefix (those before the write's reply included,
// unmatched ones ignored); refusals before anything is sent, timeout, SIGINT, clean-up.

import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl request")
struct RequestTests {
    /// `request <vendor device> --write <cmd> --notify <rsp>` and what follows.
    static func vendor(_ rest: String..., address: String = World.vendor) -> [String] {
        ["request", address, "--write", World.vendorWrite, "--notify", World.vendorNotify] + rest
    }

    @Test("0x01 → 81 02 00 07: subscribed first, one write, notifications stopped, disconnected")
    func versionRequest() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(Self.vendor("01"))
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == ["address": .string(World.vendor), "request": "01", "responses": [["value": "81020007", "text": .null]]])
            #expect(topLevelKeys(run.lines.first ?? "") == ["address", "request", "responses"])
            let calls = try await sim.calls()
            #expect(calls.gattMembers == ["StartNotify", "WriteValue", "StopNotify"])
            #expect(calls.deviceMembers == ["Connect", "Disconnect"])
            try await sim.scenarioExpectClean()
        }
    }

    @Test("without a prefix every notification counts: the answer, then the unsolicited 90 00")
    func everyNotification() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(Self.vendor("01", "--count", "2", "--service", World.vendorService))
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject()?["responses"] == [["value": "81020007", "text": .null], ["value": "9000", "text": .null]])
        }
    }

    @Test("--response-prefix 90 --count 2: the answer 82 40 is ignored, two statuses taken")
    func prefixAndCount() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(Self.vendor("02", "--response-prefix", "90", "--count", "2"))
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == [
                "address": .string(World.vendor), "request": "02",
                "responses": [["value": "9000", "text": .null], ["value": "9000", "text": .null]],
            ])
            try await sim.scenarioExpectClean()
        }
    }

    @Test("an answer notified before the WriteValue reply counts")
    func answerBeforeTheWriteReply() async throws {
        try await Sim.with(faults: ["notify_before_write_reply": "1"]) { sim in
            let run = await sim.blectl(Self.vendor("02", "--response-prefix", "0x82"))
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject()?["responses"] == [["value": "8240", "text": .null]])
            try await sim.scenarioExpectClean()
        }
    }

    @Test("--text: the request's UTF-8 bytes ('A' = 41; the device answers EE 41)")
    func textRequest() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(Self.vendor("--text", "A", "--response-prefix", "ee"))
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject() == ["address": .string(World.vendor), "request": "41", "responses": [["value": "ee41", "text": .null]]])
        }
    }

    @Test("--format text")
    func text() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(Self.vendor("01", "--count", "2", "--format", "text"))
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines == ["address:   C0:FF:EE:00:00:02", "request:   01", "responses: 2", "  1: 81020007  -", "  2: 9000  -"])
        }
    }

    @Test("a device connected before blectl ran is left connected")
    func preconnectedLeftConnected() async throws {
        try await Sim.with(faults: ["preconnected": World.vendor]) { sim in
            let run = await sim.blectl(Self.vendor("01"))
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject()?["responses"] == [["value": "81020007", "text": .null]])
            let calls = try await sim.calls()
            #expect(calls.deviceMembers == [])
            #expect(calls.gattMembers == ["StartNotify", "WriteValue", "StopNotify"])
            try #expect(await sim.state().connections.map(\.address) == [World.vendor])
        }
    }

    struct Failure: Sendable, CustomTestStringConvertible {
        var label: String
        var faults: [String: String] = [:]
        var arguments: [String]
        var status: Int32
        var error: J
        var message: String
        var testDescription: String { "\(status) \(label)" }
    }

    @Test("failures: the error object, nothing on stdout, nothing left", arguments: [
        Failure(label: "write characteristic not writable", arguments: ["request", World.probe, "--write", "2a19", "--notify", World.vendorNotify, "01"],
                status: 3, error: scenarioError("not_supported", 3, operation: "write", address: World.probe, service: "180f", characteristic: "2a19"),
                message: "not supported by the device: characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01 cannot be written (flags: read notify)"),
        Failure(label: "notify characteristic cannot notify", arguments: vendor("01").map { $0 == World.vendorNotify ? World.vendorWrite : $0 },
                status: 3, error: scenarioError("not_supported", 3, operation: "notification_setup", address: World.vendor,
                                                service: World.vendorService, characteristic: World.vendorWrite),
                message: "not supported by the device: characteristic \(World.vendorWrite) in service \(World.vendorService) on C0:FF:EE:00:00:02 cannot notify (flags: write-without-response write)"),
        Failure(label: "no such characteristic", arguments: ["request", World.vendor, "--write", World.vendorWrite, "--notify", "2a19", "01"],
                status: 3, error: scenarioError("not_supported", 3, operation: "service_lookup", address: World.vendor, characteristic: "2a19"),
                message: "not supported by the device: no characteristic 2a19 (Battery Level) on C0:FF:EE:00:00:02"),
        Failure(label: "notify characteristic in two services", faults: World.toolboxFaults,
                arguments: ["request", World.toolbox, "--write", World.toolboxText, "--notify", "2a19", "01"],
                status: 64, error: scenarioError("usage", 64, operation: "service_lookup", address: World.toolbox, characteristic: "2a19"),
                message: "characteristic 2a19 (Battery Level) is in several services on C0:FF:EE:00:00:06 (180f (Battery), \(World.toolboxService)): choose one with --service"),
        Failure(label: "unknown device", arguments: vendor("01", "--timeout", "5", address: World.missing), status: 2,
                error: scenarioError("device_not_found", 2, retryable: true, operation: "device_lookup", address: World.missing),
                message: "device C0:FF:EE:00:00:99 not found"),
        // The unsolicited 90 00 still comes; it does not start with 82.
        Failure(label: "no matching answer", faults: ["no_notification": "1"], arguments: vendor("02", "--response-prefix", "82", "--timeout", "5"),
                status: 124, error: scenarioError("timed_out", 124, operation: "response", address: World.vendor, service: World.vendorService,
                                                  characteristic: World.vendorNotify),
                message: "timed out waiting for the response notification of characteristic \(World.vendorNotify) in service \(World.vendorService) on C0:FF:EE:00:00:02"),
    ])
    func failure(_ c: Failure) async throws {
        try await Sim.with(faults: c.faults) { sim in
            let run = await sim.blectl(c.arguments)
            #expect(run.status == c.status, "\(run)")
            #expect(run.stdout == "")
            scenarioExpectError(run, c.error, message: c.message)
            if c.status != 124 { try await sim.expectNothingSent() }
            try await sim.scenarioExpectClean()
        }
    }

    @Test("SIGINT while waiting for the answer: 130, notifications stopped, disconnected, nothing left")
    func interrupted() async throws {
        try await Sim.with(faults: ["no_notification": "1"]) { sim in
            let process = try await sim.launch(Self.vendor("02", "--response-prefix", "82"))
            try #expect(await sim.waitForState { !$0.notifySessions.isEmpty }, "notifications never started")
            #expect(try await sim.scenarioWaitForCall { $0.member == "WriteValue" && $0.outcome == "reply" }, "never written")
            process.sendSignal(SIGINT)
            let result = try await process.finish()
            #expect(result.stdout == "")
            try await SignalTests.expectInterrupted(result, by: SIGINT, sim: sim)
            let calls = try await sim.calls()
            #expect(calls.gattMembers == ["StartNotify", "WriteValue", "StopNotify"])
            #expect(calls.deviceMembers == ["Connect", "Disconnect"])
        }
    }

    @Test("usage errors: 64 before anything reaches BlueZ", arguments: [
        (["request", World.vendor, "01", "--notify", World.vendorNotify], "Error: Missing expected argument '--write <uuid>'"),
        (["request", World.vendor, "--write", World.vendorWrite, "--notify", World.vendorNotify], "Error: Missing expected argument '<value>'"),
        (vendor("01", "--count", "0"), "Error: Invalid value '0' for '--count': expected a whole number from 1 to 1000"),
        (vendor("zz"), "Error: Invalid value 'zz': expected hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)"),
    ])
    func usage(arguments: [String], firstLine: String) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(arguments)
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr.split(separator: "\n").first.map(String.init) == firstLine)
            #expect(run.stderr.hasSuffix("  See 'blectl request --help' for more information.\n"))
            try #expect(await sim.calls() == [])
        }
    }
}
