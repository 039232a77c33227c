// A real Mosquitto broker for the --mqtt tests, and mosquitto_sub as the collector: Debian's
// mosquitto and mosquitto-clients (`make deps`), never a stand-in.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// One message as `mosquitto_sub -F '%r %t %p'` prints it: the retain flag, the topic, the payload.
struct MQTTMessage: Sendable, Equatable, CustomStringConvertible {
    var retained: Bool
    var topic: String
    var payload: String

    var description: String { "\(retained ? "retained " : "")\(topic) \(payload)" }

    /// The payload as JSON.
    var json: J? { J.parse(payload) }
}

/// A mosquitto broker on a port of 127.0.0.1 reserved for it (``ReservedPort``): anonymous
/// clients, no persistence, so a restart forgets everything but what clients send again.
final class MQTTBroker: @unchecked Sendable {
    /// Held until the broker is gone, so the port is still its own after ``pause()`` or ``stop()``.
    private let reservation: ReservedPort
    var port: Int { reservation.port }
    private let directory: URL
    private var process: RunningProcess

    static let mosquitto = "/usr/sbin/mosquitto"
    static let mosquittoSub = "/usr/bin/mosquitto_sub"

    /// Starts a broker and waits until it takes connections.
    /// - Throws: when mosquitto is not installed (`make deps` installs it) or does not listen.
    static func start() async throws -> MQTTBroker {
        for program in [mosquitto, mosquittoSub] where !FileManager.default.isExecutableFile(atPath: program) {
            throw HarnessError.simulatorDidNotStart("\(program) is missing: the MQTT tests need Debian's mosquitto and mosquitto-clients (make deps)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("blectl-mqtt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let reservation = try ReservedPort()
        let config = directory.appendingPathComponent("mosquitto.conf")
        try "listener \(reservation.port) 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest stderr\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let broker = MQTTBroker(reservation: reservation, directory: directory,
                                process: try launchChild(mosquitto, ["-c", config.path], environment: [:]))
        try await broker.waitUntilListening()
        return broker
    }

    private init(reservation: ReservedPort, directory: URL, process: RunningProcess) {
        self.reservation = reservation
        self.directory = directory
        self.process = process
    }

    /// `mqtt://127.0.0.1:PORT/prefix`.
    func url(prefix: String) -> String { "mqtt://127.0.0.1:\(port)/\(prefix)" }

    /// Stops the broker (SIGTERM) and starts it again on the same port.
    func restart() async throws {
        stopProcess()
        process = try launchChild(Self.mosquitto, ["-c", directory.appendingPathComponent("mosquitto.conf").path], environment: [:])
        try await waitUntilListening()
    }

    /// Stops the broker, keeping its port and configuration for ``restart()``.
    func pause() {
        stopProcess()
    }

    /// Stops the broker and removes its directory.
    func stop() {
        stopProcess()
        try? FileManager.default.removeItem(at: directory)
    }

    private func stopProcess() {
        process.sendSignal(SIGTERM)
        _ = process.wait(timeout: .seconds(10))
    }

    private func waitUntilListening() async throws {
        let port = port
        let listening = await eventually(within: .seconds(20)) { Self.accepts(port: port) }
        guard listening else {
            throw HarnessError.simulatorDidNotStart("mosquitto did not listen on port \(port): \(process.currentStderr)")
        }
    }

    /// `mosquitto_sub` subscribed to `topic` (wildcards allowed) and `other`, just started.
    func subscribe(_ topic: String, also other: String? = nil, retainedOnly: Bool = false, count: Int? = nil) throws -> MQTTCollector {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-F", "%r %t %p"]
        if let other { arguments += ["-t", other] }
        if retainedOnly { arguments += ["--retained-only"] }
        if let count { arguments += ["-C", "\(count)"] }
        return MQTTCollector(process: try launchChild(Self.mosquittoSub, arguments, environment: [:]))
    }

    /// A collector subscribed to `topic` once it is subscribed: it also subscribes to a
    /// retained marker published first, and is returned when the marker has come.
    func collector(_ topic: String) async throws -> MQTTCollector {
        let marker = "blectl-test/subscribed"
        let published = try await offThread { [port] in
            try runChild("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-r", "-t", marker, "-m", "1"],
                         environment: [:], timeout: .seconds(20))
        }
        guard published.status == 0 else { throw HarnessError.simulatorDidNotStart("mosquitto_pub: \(published.stderr)") }
        let collector = try subscribe(topic, also: marker)
        guard await collector.wait(until: { $0.contains { $0.topic == marker } }) else {
            collector.stop()
            throw HarnessError.simulatorDidNotStart("mosquitto_sub did not subscribe: \(collector.process.currentStderr)")
        }
        return collector
    }

    /// The retained messages under `topic`, `count` of them (waits until they have come).
    func retained(_ topic: String, count: Int) async throws -> [MQTTMessage] {
        let collector = try subscribe(topic, retainedOnly: true, count: count)
        let result = try await collector.process.finish(timeout: .seconds(20))
        return MQTTCollector.messages(result.stdout)
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// A port of 127.0.0.1 that nobody else gets while this value lives, for a broker to listen
/// on, stopped and started again as often as a test likes: a socket bound to it, with
/// SO_REUSEADDR, that never listens.
///
/// A port only chosen (bound to port 0, then closed) is free again whenever no broker
/// listens on it: before mosquitto binds it and while a test has it stopped. The kernel may
/// then give it to another test's broker asking for port 0 (its "Address already in use"
/// once failed a restart) or to an outgoing connection as its local port. A bound port is
/// given to neither, yet mosquitto, which binds with SO_REUSEADDR too, can listen on it:
/// Linux lets SO_REUSEADDR sockets share a port as long as the ones bound before do not listen.
final class ReservedPort: Sendable {
    let port: Int
    private let descriptor: Int32

    /// Binds a new socket to a port the kernel chooses.
    /// - Throws: when no port can be bound (the errno).
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            let error = errno
            close(fd)
            throw HarnessError.simulatorDidNotStart("no port to reserve: errno \(error)")
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }
}

/// A running `mosquitto_sub`: what it has printed so far, and waits on it.
struct MQTTCollector: Sendable {
    let process: RunningProcess

    /// The messages printed so far.
    var messages: [MQTTMessage] { Self.messages(process.currentStdout) }

    /// Waits (up to `limit`) until the messages so far satisfy `condition`.
    func wait(within limit: Duration = .seconds(30), until condition: @escaping @Sendable ([MQTTMessage]) -> Bool) async -> Bool {
        await eventually(within: limit, every: .milliseconds(20)) { condition(messages) }
    }

    /// Ends the collector.
    func stop() {
        process.sendSignal(SIGTERM)
        _ = process.wait(timeout: .seconds(10))
    }

    /// `%r %t %p` lines: the payloads blectl publishes are one line each.
    static func messages(_ output: String) -> [MQTTMessage] {
        output.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return MQTTMessage(retained: parts[0] == "1", topic: String(parts[1]), payload: String(parts[2]))
        }
    }
}

extension [MQTTMessage] {
    /// The payloads published on `topic`, in order.
    func payloads(on topic: String) -> [String] { filter { $0.topic == topic }.map(\.payload) }
}
