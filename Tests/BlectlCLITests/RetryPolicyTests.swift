import BlueZKit
import Testing
@testable import BlectlCLI

/// `--retries` and the error object's `retryable`: which failures blectl tries again, the
/// pauses, the finer code of an aborted connection, and the man page's list of them.
@Suite("--retries and retryable")
struct RetryPolicyTests {
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let connect = BLEOperation(.connect, address: address)
    static let write = BLEOperation(.write, address: address, service: BluetoothUUID("180f"), characteristic: BluetoothUUID("2a19"))
    static let read = BLEOperation(.read, address: address, service: BluetoothUUID("180f"), characteristic: BluetoothUUID("2a19"))
    static let response = BLEOperation(.response, address: address)

    static func failed(_ message: String, during operation: BLEOperation = connect) -> BLEError {
        .failed(operation, dbusError: BlueZ.Error.failed, message: message)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var error: BLEError
        var code: String
        var retryable: Bool
        var testDescription: String { "\(code) \(error)" }
    }

    @Test("code and retryable of each kind of failure", arguments: [
        Row(error: failed("le-connection-abort-by-remote"), code: "connection_aborted", retryable: true),
        Row(error: failed("le-connection-abort-by-local"), code: "connection_aborted", retryable: true),
        Row(error: failed("Software caused connection abort"), code: "connection_aborted", retryable: true),
        Row(error: failed("br-connection-canceled"), code: "connection_aborted", retryable: true),
        Row(error: failed("le-connection-concurrent-connection-limit"), code: "bluez_failed", retryable: true),
        Row(error: failed("le-connection-timeout"), code: "bluez_failed", retryable: true),
        Row(error: failed("le-connection-key-missing"), code: "bluez_failed", retryable: false),
        Row(error: failed("Operation failed with ATT error: 0x0e", during: read), code: "bluez_failed", retryable: false),
        Row(error: .busy(connect, dbusError: BlueZ.Error.inProgress, message: "In Progress"), code: "busy", retryable: true),
        Row(error: .busy(BLEOperation(.discovery), dbusError: BlueZ.Error.inProgress, message: "adapter busy"), code: "busy", retryable: true),
        Row(error: .disconnected(read), code: "disconnected", retryable: true),
        Row(error: .deviceNotFound(address), code: "device_not_found", retryable: true),
        Row(error: .timedOut(connect), code: "timed_out", retryable: false),
        Row(error: .notSupported(read, "no characteristic"), code: "not_supported", retryable: false),
        Row(error: .notPermitted(read, dbusError: BlueZ.Error.notPermitted, message: "Not paired"), code: "not_permitted", retryable: false),
        Row(error: .notPermitted(read, dbusError: BlueZ.Error.notAuthorized, message: "Operation Not Authorized"), code: "not_permitted",
            retryable: false),
        Row(error: .serviceReadOnly(write, dbusError: BlueZ.Error.notAuthorized, message: "Operation Not Authorized"),
            code: "service_read_only", retryable: false),
        Row(error: .protocolError(read, "bad signature"), code: "internal", retryable: false),
        Row(error: .unavailable(.poweredOff("hci0"), during: connect), code: "unavailable", retryable: false),
        Row(error: .permissionDenied("denied"), code: "permission_denied", retryable: false),
        Row(error: .deviceProtocolError(BLEOperation(.battery, address: address), "level 101"), code: "device_protocol_error",
            retryable: false),
        Row(error: .outcomeUnknown(write, "gone"), code: "outcome_unknown", retryable: false),
        // A write, or the wait for its answer, may have reached the device: never again.
        Row(error: .disconnected(write), code: "disconnected", retryable: false),
        Row(error: .busy(write, dbusError: BlueZ.Error.inProgress, message: "In Progress"), code: "busy", retryable: false),
        Row(error: .disconnected(response), code: "disconnected", retryable: false),
    ])
    func classification(_ row: Row) {
        #expect(ExitStatus.code(for: row.error) == row.code)
        #expect(RetryPolicy.isRetryable(row.error) == row.retryable)
        #expect(ExitStatus.allCodes.contains(row.code))
    }

    @Test("blectl's own errors are never retryable")
    func ownErrors() {
        #expect(!RetryPolicy.isRetryable(OutputFailed(errno: 28)))
        #expect(!RetryPolicy.isRetryable(CancellationError()))
        #expect(Printer.retryHint(for: OutputFailed(errno: 28)) == "")
    }

    @Test("the text hint: for a transient failure, not for a device not found")
    func textHint() {
        #expect(Printer.retryHint(for: Self.failed("le-connection-abort-by-remote")) == " (transient: trying again may succeed)")
        #expect(Printer.retryHint(for: BLEError.deviceNotFound(Self.address)) == "")
        #expect(Printer.retryHint(for: BLEError.timedOut(Self.connect)) == "")
    }

    @Test("the pauses: 0.25 s doubling to 2 s; at least 2 s after the controller ran out of links")
    func delays() {
        let abort = Self.failed("le-connection-abort-by-remote")
        #expect((1...6).map { RetryPolicy.delay(beforeRetry: $0, after: abort) }
                == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2)])
        #expect(RetryPolicy.delay(beforeRetry: 1000, after: abort) == .seconds(2))
        let slots = Self.failed("le-connection-concurrent-connection-limit")
        #expect((1...3).map { RetryPolicy.delay(beforeRetry: $0, after: slots) } == [.seconds(2), .seconds(2), .seconds(2)])
    }

    /// Runs the loop on scripted outcomes and counts the attempts.
    final class Script: @unchecked Sendable {
        var outcomes: [BLEError?]
        var attempts = 0
        init(_ outcomes: [BLEError?]) { self.outcomes = outcomes }
        func attempt() throws -> Int {
            attempts += 1
            if let error = outcomes.removeFirst() { throw error }
            return attempts
        }
    }

    @Test("the loop: retries a transient failure up to N times, stops at one that is not, and within the deadline")
    func loop() async throws {
        let far = ContinuousClock.now + .seconds(60)
        let abort = Self.failed("le-connection-abort-by-remote")
        let keep: (any Error) async -> any Error = { $0 }

        let once = Script([abort, nil])
        #expect(try await RetryPolicy(retries: 2).run(until: far, stillThere: keep) { try once.attempt() } == 2)

        let never = Script([abort, nil])
        await #expect(throws: BLEError.self) { try await RetryPolicy(retries: 0).run(until: far, stillThere: keep) { try never.attempt() } }
        #expect(never.attempts == 1)

        let permanent = Script([Self.failed("le-connection-key-missing"), nil])
        await #expect(throws: BLEError.self) { try await RetryPolicy(retries: 5).run(until: far, stillThere: keep) { try permanent.attempt() } }
        #expect(permanent.attempts == 1)

        let exhausted = Script([abort, abort, abort, nil])
        await #expect(throws: BLEError.self) { try await RetryPolicy(retries: 2).run(until: far, stillThere: keep) { try exhausted.attempt() } }
        #expect(exhausted.attempts == 3)

        // 0.6 s left: the first pause (0.25 s) and 0.5 s more do not fit.
        let late = Script([abort, nil])
        await #expect(throws: BLEError.self) {
            try await RetryPolicy(retries: 2).run(until: .now + .milliseconds(600), stillThere: keep) { try late.attempt() }
        }
        #expect(late.attempts == 1)

        // Bluetooth went away during the pause: that is reported, not retried.
        let gone = Script([abort, nil])
        let powerOff: (any Error) async -> any Error = { _ in BLEError.unavailable(.poweredOff("hci0"), during: Self.connect) }
        await #expect(throws: BLEError.unavailable(.poweredOff("hci0"), during: Self.connect)) {
            try await RetryPolicy(retries: 2).run(until: far, stillThere: powerOff) { try gone.attempt() }
        }
        #expect(gone.attempts == 1)
    }

    /// NOTES' Retries subsection of the man page.
    static var retriesSection: String {
        ManPageTests.page.components(separatedBy: "\n.SS Retries\n").dropFirst().first?.components(separatedBy: "\n.SS ").first ?? ""
    }

    @Test("the man page's Retries says of every code whether it is retryable, and names every transient BlueZ reason")
    func manPage() {
        let section = Self.retriesSection
        let lines = section.split(separator: "\n", omittingEmptySubsequences: false)
        var described = Set<String>()
        for (previous, line) in zip(lines, lines.dropFirst()) where previous == ".TP" {
            if line.hasPrefix(".B ") { described.insert(String(line.dropFirst(3))) }
            if line.hasPrefix(".BR ") {
                described.formUnion(line.dropFirst(4).replacing("\", \"", with: " ").split(separator: " ").map(String.init))
            }
        }
        #expect(Set(ExitStatus.allCodes).subtracting(described).sorted() == [], "codes Retries does not describe")
        #expect(described.subtracting(ExitStatus.allCodes).sorted() == [], "codes Retries describes that blectl lacks")
        let text = section.replacing("\\-", with: "-").replacing("\n", with: " ")
        for message in BLEError.transientFailureMessages.keys.sorted() {
            #expect(text.contains(message), "Retries does not name \(message)")
        }
    }
}
