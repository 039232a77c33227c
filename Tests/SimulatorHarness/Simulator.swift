// Test harness for the simulated BlueZ (sim/bluez-sim): one private dbus-daemon and
// simulator per Simulator instance, torn down by stop() or deinit (and, should the
// test process die, by the simulator seeing EOF on its stdin).

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One org.bluez method call the simulator received.
public struct SimCall: Sendable, Decodable, Equatable {
    public let member: String
    public let interface: String?
    public let path: String
    public let sender: String
    /// "reply", "error:<name>", "pending", or "dropped" (a Pair whose caller left the bus).
    public let outcome: String
    /// SetDiscoveryFilter: the filter as the simulator parsed it.
    public let filter: [String: JSONValue]?
    /// The caller left the bus while the call was still unanswered (its answer, if any,
    /// went nowhere); nil when it did not.
    public let callerLeft: Bool?

    enum CodingKeys: String, CodingKey {
        case member, interface, path, sender, outcome, filter
        case callerLeft = "caller_left"
    }
}

extension [SimCall] {
    /// The calls that turn a characteristic's notifications on or off (StartNotify,
    /// StopNotify, AcquireNotify), in order, each as "Member outcome".
    public var notifyCalls: [String] {
        filter { ["StartNotify", "StopNotify", "AcquireNotify"].contains($0.member) }.map { "\($0.member) \($0.outcome)" }
    }
}

/// The simulator's State() JSON, decoded.
public struct SimState: Sendable, Decodable {
    public struct Session: Sendable, Decodable {
        public let client: String
        public let filter: [String: JSONValue]
    }
    public struct Connection: Sendable, Decodable {
        public let address: String
        public let connectedBy: String?
        public let preconnected: Bool
        public let disconnecting: Bool
        enum CodingKeys: String, CodingKey {
            case address, preconnected, disconnecting
            case connectedBy = "connected_by"
        }
    }
    public struct PendingGATT: Sendable, Decodable {
        public let op: String
        public let path: String
        public let client: String
    }
    public struct NotifySession: Sendable, Decodable {
        public let path: String
        public let client: String
        /// An AcquireNotify socket (bluetoothd counts its client among the notify clients),
        /// not a StartNotify session.
        public let acquired: Bool
    }
    /// An org.bluez.Agent1 registered with AgentManager1.
    public struct Agent: Sendable, Decodable, Equatable {
        public let client: String
        public let path: String
        public let capability: String
        /// Whether it heads the default-agent queue.
        public let `default`: Bool
    }
    /// A Device1.Pair still running.
    public struct Pairing: Sendable, Decodable, Equatable {
        public let address: String
        public let client: String
        /// held (fault pair_held), connecting, agent, exchange or resolving.
        public let stage: String
    }
    /// A call the simulated bluetoothd made to an agent.
    public struct AgentCall: Sendable, Decodable, Equatable {
        public let member: String
        public let agent: String
        public let path: String
        public let device: String?
        /// "pending", "reply", "reply:<values>", "error:<name>" or "sent" (no reply expected).
        public let outcome: String
    }
    public let bluezRunning: Bool
    /// The bluetoothd version modelled ("5.66"; nil from a simulator that models only 5.66).
    public let bluez: String?
    public let adapter: Bool
    public let powered: Bool
    public let discovering: Bool
    public let discoverySessions: [Session]
    /// Clients whose StartDiscovery is not answered yet (held, delayed or unanswered).
    public let pendingStartDiscovery: [String]
    public let connections: [Connection]
    public let pendingConnects: [String]
    public let pendingGATT: [PendingGATT]
    public let notifySessions: [NotifySession]
    /// Addresses of the devices in the object tree.
    public let devices: [String]
    public let faults: [String: JSONValue]
    /// The private dbus-daemon's process id (nil when the simulator joined an existing bus).
    public let busPID: Int32?
    /// How many times bluetoothd "blinked" (``Simulator/blink()``, fault bluez_blink_on).
    public let blinks: Int?
    /// How many times clients were held (stopped) for a group of messages (fault hold_client_ms).
    public let holds: Int?
    /// Registered pairing agents (nil from a simulator without pairing).
    public let agents: [Agent]?
    /// Pair calls still running.
    public let pairings: [Pairing]?
    /// Calls made to agents, in order.
    public let agentCalls: [AgentCall]?
    /// Addresses of the paired devices in the tree.
    public let paired: [String]?
    /// A Device1.Connect attempt the simulated bluetoothd started, and the bearer it took.
    public struct ConnectAttempt: Sendable, Decodable, Equatable {
        public let address: String
        /// "le" or "bredr" (a dual-mode device, fault dual_mode_device).
        public let bearer: String
        public init(address: String, bearer: String) {
            self.address = address
            self.bearer = bearer
        }
    }
    /// Every Connect attempt started since start-up (or Reset), in order.
    public let connects: [ConnectAttempt]?
    /// LE connection creation on the adapter: the queue and the links (Simulator+Fleet.swift).
    public let leConnect: LEConnect?
    /// Every LE connection creation asked since start-up (or Reset), in the order asked.
    public let leCreations: [LECreation]?
    /// Faults of single devices: address -> kinds (sim/README.md, Fleets).
    public let deviceFaults: [String: [String]]?
    /// The advertisements registered with LEAdvertisingManager1 (Simulator+Advertising.swift).
    public let advertisements: [SimAdvertisement]?
    /// The GATT applications registered with GattManager1 (Simulator+Central.swift).
    public let applications: [SimApplication]?
    /// The calls bluetoothd made into clients' objects, in order (Simulator+Advertising.swift).
    public let appCalls: [SimAppCall]?

    enum CodingKeys: String, CodingKey {
        case adapter, powered, discovering, connections, devices, faults, bluez
        case bluezRunning = "bluez_running"
        case discoverySessions = "discovery_sessions"
        case pendingStartDiscovery = "pending_start_discovery"
        case pendingConnects = "pending_connects"
        case pendingGATT = "pending_gatt"
        case notifySessions = "notify_sessions"
        case busPID = "bus_pid"
        case blinks, holds, agents, pairings, paired, connects
        case agentCalls = "agent_calls"
        case leConnect = "le_connect"
        case leCreations = "le_creations"
        case deviceFaults = "device_faults"
        case advertisements, applications
        case appCalls = "app_calls"
    }

    public var discoveryClients: [String] { discoverySessions.map(\.client) }
}

/// Any JSON value (filters and faults in the state).
public enum JSONValue: Sendable, Decodable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }
}

public final class Simulator: Sendable {
    /// The private bus address (what DBUS_SYSTEM_BUS_ADDRESS must be for clients).
    public let address: String
    /// The repository root (found from this file's path).
    public let repoRoot: URL
    private let process: RunningProcess
    /// Processes started with ``launch(_:_:environment:stdinPipe:)``: any still running when
    /// the simulator stops is killed (a test that failed before waiting for its blectl must
    /// not leave it running after the suite).
    private let launched = NSLock()
    nonisolated(unsafe) private var launchedProcesses: [RunningProcess] = []

    public static let defaultRepoRoot: URL = {
        if let env = ProcessInfo.processInfo.environment["BLESIM_REPO_ROOT"] {
            return URL(fileURLWithPath: env)
        }
        // <root>/Tests/SimulatorHarness/Simulator.swift
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }()

    private init(address: String, repoRoot: URL, process: RunningProcess) {
        self.address = address
        self.repoRoot = repoRoot
        self.process = process
    }

    /// The bluetoothd versions the simulator models (sim/bluezsim/versions.py).
    public static let bluezVersions = ["5.66", "5.82", "5.87"]
    /// The version it models unless told otherwise.
    public static let defaultBluez = "5.66"

    /// Spawns `sim/bluez-sim --spawn-bus --bluez VERSION [--set NAME=VALUE ...]` and waits (30 s
    /// at most, a hang guard: a loaded machine starting dozens takes seconds) for its ADDRESS
    /// line. `bluez`: the bluetoothd version modelled (one of ``bluezVersions``); its own
    /// behaviours that are faults too (sim/README.md) are on unless `faults` sets them.
    public static func start(faults: [String: String] = [:], bluez: String = defaultBluez) throws -> Simulator {
        let root = defaultRepoRoot
        let exe = root.appendingPathComponent("sim/bluez-sim").path
        var args = ["--spawn-bus", "--bluez", bluez]
        for (k, v) in faults.sorted(by: { $0.key < $1.key }) { args += ["--set", "\(k)=\(v)"] }
        let proc = try spawnChild(exe, args, environment: ProcessInfo.processInfo.environment,
                                  stdinPipe: true, inheritStderr: true)
        let deadline = Deadline(after: .seconds(30))
        while true {
            let text = String(decoding: proc.stdoutData(), as: UTF8.self)
            if let line = text.split(separator: "\n", omittingEmptySubsequences: true).first(where: { $0.hasPrefix("ADDRESS=") }),
               text.contains("\n") {
                return Simulator(address: String(line.dropFirst("ADDRESS=".count)), repoRoot: root, process: proc)
            }
            if let status = proc.poll() {
                throw HarnessError.simulatorDidNotStart("bluez-sim exited with status \(status): \(text)")
            }
            if deadline.hasPassed {
                proc.sendSignal(SIGKILL)
                _ = proc.wait(timeout: .seconds(2))
                throw HarnessError.simulatorDidNotStart("no ADDRESS line within 30 s")
            }
            usleep(2000)
        }
    }

    /// Starts a simulator with `faults`, runs `body`, stops the simulator: starting and
    /// stopping (which wait for the simulator's process) run off the cooperative pool, so
    /// that a test waiting for its simulator does not stop every other test of the process.
    /// Use it from async tests rather than ``start(faults:bluez:)``.
    public static func with<T>(faults: [String: String] = [:], bluez: String = defaultBluez,
                               _ body: (Simulator) async throws -> T) async throws -> T {
        let simulator = try await offThread { try Simulator.start(faults: faults, bluez: bluez) }
        let result: Result<T, any Error>
        do { result = .success(try await body(simulator)) } catch { result = .failure(error) }
        await simulator.stop()
        return try result.get()
    }

    deinit { Self.end(process, launched: takeLaunched(), waiting: false) }

    /// Ends the simulator and its bus: closes its stdin, SIGTERM, SIGKILL after 3 s, and
    /// returns once it has ended.
    public func stopAndWait() {
        Self.end(process, launched: takeLaunched(), waiting: true)
    }

    /// Ends the simulator as ``stopAndWait()`` does, without waiting: the process is reaped
    /// on a thread of its own. What a `defer` in an async test calls (it cannot await, and a
    /// wait there would hold a thread of the cooperative pool); the async overload waits.
    public func stop() {
        Self.end(process, launched: takeLaunched(), waiting: false)
    }

    private func takeLaunched() -> [RunningProcess] {
        launched.lock()
        defer { launched.unlock() }
        let children = launchedProcesses
        launchedProcesses.removeAll()
        return children
    }

    private static func end(_ process: RunningProcess, launched children: [RunningProcess], waiting: Bool) {
        let reap: @Sendable () -> Void = {
            for child in children where child.poll() == nil { _ = child.wait(timeout: .zero) }
            guard process.poll() == nil else { return }
            process.closeStdin()
            process.sendSignal(SIGTERM)
            _ = process.wait(timeout: .seconds(3))
        }
        if waiting { reap() } else { Thread.detachNewThread(reap) }
    }

    /// Process id of bluez-sim.
    public var pid: Int32 { process.pid }

    /// Whether bluez-sim is still running (it ends with its bus: ``killBus()``).
    public var isRunning: Bool { process.poll() == nil }

    // MARK: the private bus itself

    /// The private dbus-daemon's process id: bluez-sim's dbus-daemon child, read from /proc
    /// (no round trip, so ``killBus()`` acts at once), else State()'s `bus_pid`.
    public func busProcessID() throws -> Int32 {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ Int32($0) }) {
            let comm = (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8)) ?? ""
            if comm.hasPrefix("dbus-daemon") { return child }
        }
        guard let busPID = try state().busPID else {
            throw HarnessError.simctlFailed("the simulator did not start its own bus (no bus_pid)")
        }
        return busPID
    }

    /// Kills the private dbus-daemon with SIGKILL, now: every client's connection breaks at
    /// once (the socket hangs up), as when the system bus dies. bluez-sim ends with it (its
    /// control connection is gone); this waits for that, 30 s at most (a hang guard).
    /// Afterwards the control interface is gone too: no state(), calls() or leftovers.
    /// - Parameter busPID: the daemon's pid when already known (``busProcessID()``).
    public func killBus(busPID: Int32? = nil) throws {
        let target = try busPID ?? busProcessID()
        guard kill(target, SIGKILL) == 0 else { throw HarnessError.spawnFailed("kill dbus-daemon \(target)", errno) }
        _ = process.wait(timeout: .seconds(30))
    }

    // MARK: control interface (org.blectl.Simulator1, through dbus-send)

    /// Calls `method` of the control interface with string arguments and returns the string
    /// it answers ("" for none). dbus-send, not sim/simctl: the tests poll the state often,
    /// and a Python start-up per look (about 50 ms of CPU, several times that on a loaded
    /// machine) made every wait slower than what it waited for. dbus-send comes with
    /// dbus-daemon (Debian's dbus-bin).
    private func control(_ method: String, _ args: [String] = []) throws -> String {
        try control(method, typed: args.map { "string:\($0)" })
    }

    /// A control call with dbus-send's typed arguments (`int32:5`).
    func control(_ method: String, typed args: [String]) throws -> String {
        let r = run("dbus-send", ["--bus=\(address)", "--dest=org.blectl.Simulator", "--print-reply=literal",
                                  "--reply-timeout=10000", "/org/blectl/Simulator", "org.blectl.Simulator1.\(method)"]
                        + args,
                    environment: [:], timeout: .seconds(15))
        if r.status != 0 {
            throw HarnessError.simctlFailed("\(method)(\(args.joined(separator: ", "))): status \(r.status): \(r.stderr)")
        }
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// State() as decoded JSON.
    public func state() throws -> SimState {
        let text = try control("State")
        do { return try JSONDecoder().decode(SimState.self, from: Data(text.utf8)) }
        catch { throw HarnessError.badJSON("\(error): \(text)") }
    }

    /// State() as a plain dictionary.
    public func stateDictionary() throws -> [String: Any] {
        let text = try control("State")
        guard let obj = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw HarnessError.badJSON(text)
        }
        return obj
    }

    /// Every org.bluez method call received so far, in order.
    public func calls() throws -> [SimCall] {
        let text = try control("Calls")
        do { return try JSONDecoder().decode([SimCall].self, from: Data(text.utf8)) }
        catch { throw HarnessError.badJSON("\(error): \(text)") }
    }

    /// Sets a fault at run time (value parsed like `--set NAME=VALUE`).
    public func setFault(_ name: String, _ value: String) throws { _ = try control("SetFault", [name, value]) }
    public func clearFaults() throws { _ = try control("ClearFaults") }
    /// bluetoothd "blinks": releases org.bluez and takes it again at once (same connection),
    /// then InterfacesAdded for all its objects, all back to back (sim/README.md, Control).
    public func blink() throws { _ = try control("Blink") }
    /// `count` notifications (value i = i as 4 bytes big-endian, i = 1...count) back to back
    /// on a characteristic of `address` that has a notification session.
    public func notifyBurst(address: String, characteristic uuid: String, count: Int) throws {
        _ = try control("NotifyBurst", typed: ["string:\(address)", "string:\(uuid)", "int32:\(count)"])
    }
    /// The link of `address` drops (out of range): Connected false, notification sessions
    /// kept and re-enabled on the next connection as bluetoothd 5.66 does; with `remove`, the
    /// device object is removed too (sim/README.md, DropLink).
    public func dropLink(address: String, remove: Bool = false) throws {
        _ = try control("DropLink", typed: ["string:\(address)", "boolean:\(remove)"])
    }
    /// The connected device `address` changes its GATT database (Service Changed): the
    /// service `uuid` is removed and added again at new handles, new object paths
    /// (sim/README.md, ServiceChanged).
    public func serviceChanged(address: String, service uuid: String) throws {
        _ = try control("ServiceChanged", typed: ["string:\(address)", "string:\(uuid)"])
    }
    /// Back to the start-up world and faults, call log emptied.
    public func reset() throws { _ = try control("Reset") }

    /// Polls `condition` on the state until it holds or the timeout passes.
    public func waitForState(timeout: Duration = .seconds(30), _ condition: (SimState) -> Bool) throws -> Bool {
        let deadline = Deadline(after: timeout)
        while true {
            if condition(try state()) { return true }
            if deadline.hasPassed { return false }
            usleep(20_000)
        }
    }

    /// What a client left in the simulator (``SimState/leftovers``), once it is clean or
    /// `timeout` has passed: polled, so a clean-up still on its way (a Disconnect the
    /// simulator has not read yet on a loaded machine) is waited for; empty when clean.
    /// The generous default costs nothing when the state is clean: it returns at once.
    public func leftovers(within timeout: Duration = .seconds(60)) throws -> [String] {
        var last: [String] = []
        _ = try waitForState(timeout: timeout) { state in
            last = state.leftovers
            return last.isEmpty
        }
        return last
    }

    // MARK: running clients against this simulator

    private func childEnvironment(_ extra: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Runs a process with DBUS_SYSTEM_BUS_ADDRESS set to this simulator (plus
    /// `environment`, merged over the test's own), stdin /dev/null, both pipes read in
    /// full; killed (SIGKILL) at the timeout. status: exit code, or 128+signal.
    public func run(_ executable: String, _ args: [String], environment: [String: String] = [:],
                    timeout: Duration = .seconds(30)) -> (status: Int32, stdout: String, stderr: String) {
        do {
            let p = try spawnChild(executable, args, environment: childEnvironment(environment), stdinPipe: false)
            let r = p.wait(timeout: timeout)
            return (r.status, r.stdout, r.stderr)
        } catch {
            return (127, "", "\(error)")
        }
    }

    /// Starts a process like run() but returns at once: use `pid`, `sendSignal(SIGINT)`,
    /// `waitForStdout(containing:timeout:)`, then `wait(timeout:)` for status and output.
    public func launch(_ executable: String, _ args: [String], environment: [String: String] = [:],
                       stdinPipe: Bool = false) throws -> RunningProcess {
        let child = try spawnChild(executable, args, environment: childEnvironment(environment), stdinPipe: stdinPipe)
        launched.lock()
        launchedProcesses.append(child)
        launched.unlock()
        return child
    }
}
