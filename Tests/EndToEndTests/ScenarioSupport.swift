// Helpers for the failure-scenario tests (issue 3), on top of Support.swift: timed runs,
// the expected error object, and the simulator's call log read as member/outcome lists.

import Foundation
import SimulatorHarness
import Testing

enum ScenarioWorld {
    static let probePath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
    static let vendorPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_02"
    static let gattBatteryPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_04"
    static let inProgress = "org.bluez.Error.InProgress"
    static let failed = "error:org.bluez.Error.Failed"
}

/// One blectl run and how long it took.
struct ScenarioTimedRun: Sendable {
    let run: Run
    let elapsed: Duration

    /// Expects the run to have ended before `deadline`, its own `--timeout`: "at once"
    /// rather than "at the deadline". The exit status already tells the two apart (at the
    /// deadline blectl says timed_out, 124); this restates it against blectl's own clock,
    /// which any machine keeps, where a fixed "under 3 s" did not under a sanitizer.
    func expectEndedBefore(_ deadline: Duration, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(elapsed < deadline, "elapsed \(elapsed), deadline \(deadline)", sourceLocation: sourceLocation)
    }
}

extension Sim {
    /// Runs blectl to its end and measures its wall time.
    func scenarioRun(_ arguments: [String], timeout: Duration = .seconds(30)) async -> ScenarioTimedRun {
        let started = ContinuousClock.now
        let run = await blectl(arguments, timeout: timeout)
        return ScenarioTimedRun(run: run, elapsed: ContinuousClock.now - started)
    }

    /// Polls the call log (up to `timeout`, a hang guard) until a call satisfies `condition`.
    func scenarioWaitForCall(timeout: Duration = .seconds(30), _ condition: @escaping @Sendable (SimCall) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await calls().contains(where: condition) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Expects nothing blectl could have started to be left (polled up to 60 s: at once when clean).
    func scenarioExpectClean(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let left = try await leftovers()
        #expect(left.isEmpty, "left behind: \(left)", sourceLocation: sourceLocation)
    }
}

extension [SimCall] {
    /// The outcomes of the calls to `member`, in order.
    func scenarioOutcomes(_ member: String) -> [String] { filter { $0.member == member }.map(\.outcome) }

    /// The members called, in order.
    var scenarioMembers: [String] { map(\.member) }

    /// Position of the first call to `member`, or nil.
    func scenarioIndex(_ member: String) -> Int? { firstIndex { $0.member == member } }
}

/// The error object blectl prints on stderr, but for its `message` (checked apart).
func scenarioError(_ code: String, _ status: Int, retryable: Bool = false, operation: String? = nil, address: String? = nil,
                   service: String? = nil, characteristic: String? = nil, dbusError: String? = nil) -> J {
    func optional(_ s: String?) -> J { s.map(J.string) ?? .null }
    return [
        "code": .string(code), "exit_status": .int(status), "retryable": .bool(retryable), "operation": optional(operation), "address": optional(address),
        "service": optional(service), "characteristic": optional(characteristic), "dbus_error": optional(dbusError),
    ]
}

/// Checks the one JSON error line on stderr: every field but the message exactly, and the
/// message exactly when `message` is given, else that it contains each of `mentions`.
func scenarioExpectError(_ run: Run, _ expected: J, message: String? = nil, mentions: [String] = [],
                         sourceLocation: SourceLocation = #_sourceLocation) {
    guard let error = run.jsonError(sourceLocation: sourceLocation) else { return }
    #expect(error.removing("message") == expected, "\(run)", sourceLocation: sourceLocation)
    let text = error["message"]?.string ?? ""
    if let message { #expect(text == message, sourceLocation: sourceLocation) }
    for mention in mentions { #expect(text.contains(mention), "message: \(text)", sourceLocation: sourceLocation) }
}

/// The addresses printed by a scan, in order.
func scenarioAddresses(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
    run.jsonLines(sourceLocation: sourceLocation).compactMap { $0["address"]?.string }
}
