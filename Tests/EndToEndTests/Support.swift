// Shared support for the end-to-end tests: where the blectl binary is, a simulator per
// test (at most a few at once), blocking harness calls moved off Swift's cooperative
// threads, and exact JSON values parsed with JSONSerialization.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The binary

enum BlectlBinary {
    /// `BLECTL_BIN` when set; else `blectl` beside the test executable (SwiftPM puts both in
    /// the same bin directory, whatever the scratch path); else `<repo>/.build/debug/blectl`,
    /// the repository root found from this file's path.
    static let path: String = {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["BLECTL_BIN"], !explicit.isEmpty { return explicit }
        var candidates: [String] = []
        if let testExecutable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: testExecutable).deletingLastPathComponent().appendingPathComponent("blectl").path)
        }
        let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(repoRoot.appendingPathComponent(".build/debug/blectl").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }()
}

/// At most `limit` simulators at once, so that timing-sensitive runs (a 2 s scan, a 1 s
/// timeout) are not starved of CPU by dozens of simulators starting together.
actor SimulatorSlots {
    static let shared = SimulatorSlots(limit: 6)
    private var free: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []
    init(limit: Int) { free = limit }

    func acquire() async {
        if free > 0 { free -= 1; return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { free += 1 } else { waiters.removeFirst().resume() }
    }
}

// MARK: - One run of blectl

struct Run: Sendable, CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    let stdout: String
    let stderr: String

    var description: String { "blectl \(arguments.joined(separator: " ")) -> \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }

    /// stdout split into lines (without the final empty one).
    var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }

    /// Every stdout line parsed; records an issue for a line that is not a JSON object, or
    /// output not ending with a newline.
    func jsonLines(sourceLocation: SourceLocation = #_sourceLocation) -> [J] {
        if !stdout.isEmpty && !stdout.hasSuffix("\n") {
            Issue.record("stdout does not end with a newline: \(self)", sourceLocation: sourceLocation)
        }
        return lines.compactMap { line in
            guard let value = J.parse(line), case .object = value else {
                Issue.record("stdout line is not a JSON object: \(line.debugDescription)", sourceLocation: sourceLocation)
                return nil
            }
            return value
        }
    }

    /// The one JSON object on stdout (exactly one line), or nil with an issue recorded.
    func jsonObject(sourceLocation: SourceLocation = #_sourceLocation) -> J? {
        let objects = jsonLines(sourceLocation: sourceLocation)
        guard objects.count == 1, lines.count == 1 else {
            Issue.record("expected exactly one JSON object on stdout: \(self)", sourceLocation: sourceLocation)
            return nil
        }
        return objects[0]
    }

    /// The `error` member of the one JSON line on stderr, or nil with an issue recorded.
    func jsonError(sourceLocation: SourceLocation = #_sourceLocation) -> J? {
        let errLines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        guard errLines.count == 2, errLines[1].isEmpty, let object = J.parse(String(errLines[0])),
              let error = object["error"], object.keys == ["error"] else {
            Issue.record("expected one JSON error line on stderr: \(self)", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }
}

// MARK: - A simulator for one test

/// A simulator (private dbus-daemon + sim/bluez-sim) and blectl runs against it.
struct Sim: Sendable {
    let simulator: Simulator

    /// The fault every test gets unless it says otherwise: BlueZ's 2 s disconnect timer
    /// shortened, so that the suite stays fast.
    static let fastDisconnect = ["disconnect_delay_ms": "200"]

    /// Starts a simulator modelling bluetoothd `bluez` with `faults` (merged over
    /// `fastDisconnect` unless `fastDisconnect` is false), runs `body`, stops the simulator.
    static func with<T: Sendable>(
        faults: [String: String] = [:], fastDisconnect: Bool = true, bluez: String = Simulator.defaultBluez,
        _ body: (Sim) async throws -> T
    ) async throws -> T {
        await SimulatorSlots.shared.acquire()
        let all = fastDisconnect ? Self.fastDisconnect.merging(faults) { $1 } : faults
        let simulator: Simulator
        do {
            simulator = try await offThread { try Simulator.start(faults: all, bluez: bluez) }
        } catch {
            await SimulatorSlots.shared.release()
            throw error
        }
        let sim = Sim(simulator: simulator)
        let result: Result<T, any Error>
        do { result = .success(try await body(sim)) } catch { result = .failure(error) }
        await simulator.stop()
        await SimulatorSlots.shared.release()
        return try result.get()
    }

    /// Runs blectl to its end (SIGKILL after `timeout`).
    func blectl(_ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(30)) async -> Run {
        let simulator = simulator
        let r = (try? await offThread {
            simulator.run(BlectlBinary.path, arguments, environment: environment, timeout: timeout)
        }) ?? (status: -1, stdout: "", stderr: "could not run blectl")
        return Run(arguments: arguments, status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    /// Starts blectl and returns at once; `stdinPipe`: its standard input a pipe the test
    /// writes (``RunningProcess/writeStdin(_:)``), else /dev/null.
    func launch(_ arguments: [String], environment: [String: String] = [:], stdinPipe: Bool = false) async throws -> RunningProcess {
        let simulator = simulator
        return try await offThread { try simulator.launch(BlectlBinary.path, arguments, environment: environment, stdinPipe: stdinPipe) }
    }

    func state() async throws -> SimState {
        let simulator = simulator
        return try await offThread { try simulator.state() }
    }

    func calls() async throws -> [SimCall] {
        let simulator = simulator
        return try await offThread { try simulator.calls() }
    }

    func setFault(_ name: String, _ value: String) async throws {
        let simulator = simulator
        try await offThread { try simulator.setFault(name, value) }
    }

    func reset() async throws {
        let simulator = simulator
        try await offThread { try simulator.reset() }
    }

    /// Polls the state until `condition` holds (true) or `timeout` passes (false). The
    /// timeout only guards against a hang: it returns as soon as the condition holds, so it
    /// is wide (a sanitizer build on a loaded machine takes seconds to start and connect).
    func waitForState(timeout: Duration = .seconds(30), _ condition: @escaping @Sendable (SimState) -> Bool) async throws -> Bool {
        let simulator = simulator
        return try await offThread { try simulator.waitForState(timeout: timeout, condition) }
    }

    /// Polls the state (up to `timeout`) until nothing blectl could have started is left:
    /// no discovery session nor StartDiscovery pending, no connection (but the preconnected
    /// ones), no pending connect, no pending GATT request, no notification session, no
    /// pairing agent, no Pair running. Returns what is left at the end, empty when clean
    /// (one observation: the state that ended the wait). The generous default returns at
    /// once when clean, and leaves a loaded machine (the sanitizer suites) time to finish
    /// a clean-up already on the wire.
    func leftovers(timeout: Duration = .seconds(60)) async throws -> [String] {
        let simulator = simulator
        return try await offThread { try simulator.leftovers(within: timeout) }
    }

    /// Expects nothing left behind (``leftovers(timeout:)``); a failure names what was left.
    func expectClean(timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let left = try await leftovers(timeout: timeout)
        #expect(left == [], sourceLocation: sourceLocation)
    }

    /// Starts a bare dbus-daemon (a bus where nobody owns org.bluez) and returns its
    /// process and address.
    func bareBus() async throws -> (process: RunningProcess, address: String) {
        let simulator = simulator
        let daemon = try await offThread {
            try simulator.launch("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nosyslog", "--print-address=1"])
        }
        let found = try await offThread { daemon.waitForStdout(containing: "\n", timeout: .seconds(30)) }
        let address = daemon.currentStdout.split(separator: "\n").first.map(String.init) ?? ""
        if !found || address.isEmpty {
            daemon.sendSignal(SIGKILL)
            throw HarnessError.simulatorDidNotStart("dbus-daemon printed no address")
        }
        return (daemon, address)
    }
}


extension RunningProcess {
    /// `wait(timeout:)` off the cooperative pool.
    func finish(timeout: Duration = .seconds(15)) async throws -> ProcessResult {
        try await offThread { self.wait(timeout: timeout) }
    }

    /// ``sendSignal(_:)``, then `waitUntilTaken(_:timeout:)` off the cooperative pool:
    /// true once the process has taken the signal (or ended).
    func signalAndWaitUntilTaken(_ signal: Int32, timeout: Duration = .seconds(10)) async -> Bool {
        sendSignal(signal)
        return (try? await offThread { self.waitUntilTaken(signal, timeout: timeout) }) ?? false
    }

    /// `waitForStdout(containing:timeout:)` off the cooperative pool (the timeout only guards
    /// against a hang: it returns as soon as the text is there).
    func stdoutContains(_ needle: String, within timeout: Duration = .seconds(30)) async -> Bool {
        (try? await offThread { self.waitForStdout(containing: needle, timeout: timeout) }) ?? false
    }
}

// MARK: - JSON values

/// A JSON value parsed with JSONSerialization, with booleans and integers told apart, so
/// that tests compare exact values: `#expect(object == ["percentage": 87, ...])`.
indirect enum J: Equatable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([J])
    case object([String: J])

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: J...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, J)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// Parses one JSON text; nil when it is not valid JSON.
    static func parse(_ text: String) -> J? {
        guard let any = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else { return nil }
        return J(any: any)
    }

    init(any: Any) {
        switch any {
        case is NSNull: self = .null
        case let s as String: self = .string(s)
        case let n as NSNumber:
            let type = String(cString: n.objCType)
            if type == "c" || String(describing: Swift.type(of: any)).contains("Boolean") {
                self = .bool(n.boolValue)
            } else if type == "d" || type == "f" {
                self = .double(n.doubleValue)
            } else {
                self = .int(n.intValue)
            }
        case let a as [Any]: self = .array(a.map(J.init(any:)))
        case let o as [String: Any]: self = .object(o.mapValues(J.init(any:)))
        default: self = .string("<unexpected \(Swift.type(of: any))>")
        }
    }

    subscript(key: String) -> J? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    var keys: Set<String> {
        if case .object(let o) = self { return Set(o.keys) }
        return []
    }

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var int: Int? { if case .int(let i) = self { return i }; return nil }
    var array: [J]? { if case .array(let a) = self { return a }; return nil }

    /// The object without `keys` (to compare the rest exactly).
    func removing(_ removed: String...) -> J {
        guard case .object(var o) = self else { return self }
        for key in removed { o[key] = nil }
        return .object(o)
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .int(let i): "\(i)"
        case .double(let d): "\(d)"
        case .string(let s): s.debugDescription
        case .array(let a): "[" + a.map(\.description).joined(separator: ",") + "]"
        case .object(let o): "{" + o.sorted { $0.key < $1.key }.map { "\($0.key.debugDescription):\($0.value)" }.joined(separator: ",") + "}"
        }
    }
}

/// The keys of a JSON object's top level, in the order written (JSONSerialization loses it).
func topLevelKeys(_ text: String) -> [String] {
    var keys: [String] = []
    var depth = 0
    var inString = false
    var escaped = false
    var current = ""
    var lastString: String?
    for ch in text {
        if inString {
            if escaped { escaped = false; current.append(ch); continue }
            if ch == "\\" { escaped = true; current.append(ch); continue }
            if ch == "\"" { inString = false; lastString = current; continue }
            current.append(ch)
            continue
        }
        switch ch {
        case "\"": inString = true; current = ""
        case "{", "[": depth += 1; lastString = nil
        case "}", "]": depth -= 1; lastString = nil
        case ":":
            if depth == 1, let key = lastString { keys.append(key) }
            lastString = nil
        case ",": lastString = nil
        default: break
        }
    }
    return keys
}

// MARK: - The simulated world (sim/README.md)

enum World {
    static let probe = "C0:FF:EE:00:00:01"
    static let vendor = "C0:FF:EE:00:00:02"
    static let battery1 = "C0:FF:EE:00:00:03"
    static let gattBattery = "C0:FF:EE:00:00:04"
    static let plain = "C0:FF:EE:00:00:05"
    static let missing = "C0:FF:EE:00:00:99"
    static let known = [probe, vendor, battery1, gattBattery, plain]
    static let fillers = ["5E:3A:91:0C:44:21", "6F:12:8B:DE:02:9A", "4A:C2:7D:11:93:E0", "7B:05:E6:40:BB:13", "D4:8E:22:51:07:6C"]

    static let vendorService = "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let vendorWrite = "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let vendorNotify = "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b"
    static let vendorOptions = ["--vendor-service", vendorService, "--vendor-write", vendorWrite, "--vendor-notify", vendorNotify]

    /// The scan record's keys, in order.
    static let scanKeys = ["address", "address_type", "name", "rssi", "tx_power", "appearance", "uuids", "manufacturer_data",
                           "company", "service_data", "service_names", "decoded", "connected", "adapter", "time",
                           "first_seen", "last_seen"]
    /// The error object's keys, in order.
    static let errorKeys = ["code", "exit_status", "retryable", "message", "operation", "address", "service", "characteristic", "dbus_error"]
}
