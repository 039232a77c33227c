import CMosquitto
import Dispatch
import DBusKit
#if canImport(Glibc)
import Glibc
#endif

/// Publishes blectl's records to an MQTT broker through libmosquitto, loaded when first asked
/// for (``CMosquittoAPI``), with the library's own network thread (`mosquitto_loop_start`).
///
/// What it does for the command (libmosquitto's API documentation, mosquitto.h, for each call):
/// - connects asynchronously (`mosquitto_connect_async`) with MQTT 3.1.1, a clean session and
///   the keepalive asked for; a broker that cannot be reached is tried again by the library
///   (`mosquitto_reconnect_delay_set`: 1 s, growing up to 30 s; a first connection that never
///   got as far as a socket is tried again here), and the command goes on;
/// - sets the will `offline` (retained, QoS 1) on ``MQTTTopics/status``, which the broker
///   publishes when the connection ends without a DISCONNECT (MQTT 3.1.1 section 3.1.2.5), and
///   publishes `online` there, retained, at every connection (CONNACK accepted);
/// - publishes every message with QoS 1 (at least once, section 4.3.2): libmosquitto keeps a
///   message until its PUBACK and sends it again after a reconnection;
/// - bounds what waits for its PUBACK to ``Configuration/queueLimit`` messages: a record
///   published beyond it is dropped and counted (``dropped``);
/// - on ``close(timeout:)``, publishes `offline` (retained), waits for what is in flight up to
///   the timeout, and disconnects cleanly (so that the will is not sent).
///
/// `@unchecked Sendable`: `client` is used from any thread as libmosquitto allows once its
/// thread runs (its calls take their own locks); the counts are behind `state`.
final class MQTTPublisher: @unchecked Sendable {
    struct Configuration: Sendable {
        var url: MQTTBrokerURL
        /// The gateway's level in every topic.
        var gateway: String
        /// Seconds between the client's PINGREQs when idle, 5 to 65535 (MQTT 3.1.1 section
        /// 3.1.2.10; libmosquitto refuses less than 5). The broker sends the will after 1.5 times
        /// this without a packet, or at once when the connection closes.
        var keepalive: Int
        /// Messages published and not yet acknowledged beyond which a new record is dropped.
        var queueLimit: Int
        /// `mqtts`: the PEM file of the certificate authorities to trust; nil for the system's
        /// directory, ``systemCADirectory``.
        var caFile: String?
    }

    /// The CA directory `mqtts` trusts without `--mqtt-cafile` (Debian's ca-certificates).
    static let systemCADirectory = "/etc/ssl/certs"

    let topics: MQTTTopics
    private let configuration: Configuration
    private let api: UnsafePointer<CMosquittoAPI>
    private let client: OpaquePointer
    private let report: @Sendable (String) -> Void
    private let state = Lock(State())

    private struct State {
        var inFlight = 0
        var dropped = 0
        var connected = false
        var closing = false
        /// Resumed when `inFlight` reaches 0 during ``close(timeout:)``.
        var drained: CheckedContinuation<Void, Never>?
        /// The last connection failure reported, so that retries do not repeat it.
        var lastReported: String?
    }

    /// Loads libmosquitto, configures a client and starts connecting; returns without waiting
    /// for the broker. `report` gets the connection's changes (connected, lost, refused) as one
    /// line of text each, from libmosquitto's thread.
    /// - Throws: ``MQTTError`` when libmosquitto cannot be loaded (not installed) or refuses the
    ///   configuration (a CA file it cannot read).
    init(_ configuration: Configuration, report: @escaping @Sendable (String) -> Void) throws(MQTTError) {
        var message = [CChar](repeating: 0, count: 256)
        guard let api = cmosquitto_load(&message, message.count) else {
            throw MQTTError.libraryUnavailable(String(cString: message))
        }
        self.api = api
        self.configuration = configuration
        self.report = report
        topics = MQTTTopics(prefix: configuration.url.prefix, gateway: configuration.gateway)
        guard let client = api.pointee.new_client(nil, true, nil) else { throw MQTTError.setup("mosquitto_new failed") }
        self.client = client
        // A throw from here on runs deinit, which destroys the client.
        try configure()
    }

    private func configure() throws(MQTTError) {
        let api = api.pointee
        let url = configuration.url
        try check(api.int_option(client, MOSQ_OPT_PROTOCOL_VERSION, CMOSQUITTO_PROTOCOL_V311), "protocol version")
        if let username = url.username {
            try check(api.username_pw_set(client, username, url.password), "username")
        }
        if url.usesTLS {
            let rc = api.tls_set(client, configuration.caFile, configuration.caFile == nil ? Self.systemCADirectory : nil, nil, nil, nil)
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                throw MQTTError.setup("TLS with \(configuration.caFile ?? Self.systemCADirectory): \(errorText(rc))")
            }
        }
        let offline = Array(MQTTTopics.offline.utf8)
        try check(api.will_set(client, topics.status, Int32(offline.count), offline, 1, true), "last will")
        try check(api.reconnect_delay_set(client, 1, 30, true), "reconnection delay")
        // The callbacks find this publisher through the client's user data pointer, unretained:
        // the client is destroyed (and its thread stopped) before the publisher goes.
        api.user_data_set(client, Unmanaged.passUnretained(self).toOpaque())
        api.connect_callback_set(client) { _, context, rc in MQTTPublisher.from(context).connected(rc) }
        api.disconnect_callback_set(client) { _, context, rc in MQTTPublisher.from(context).disconnected(rc) }
        api.publish_callback_set(client) { _, context, _ in MQTTPublisher.from(context).acknowledged() }
        // The library's own errors: a TLS handshake that fails (a plain listener, a certificate
        // not trusted) ends its network thread with no disconnect callback, said only here.
        api.log_callback_set(client) { _, context, level, message in
            guard level == CMOSQUITTO_LOG_ERR, let message else { return }
            MQTTPublisher.from(context).failed(String(cString: message))
        }
        let rc = api.connect_async(client, url.host, Int32(url.port), Int32(configuration.keepalive))
        if rc == MOSQ_ERR_TLS.rawValue {
            // A broker at hand whose TLS handshake failed at once (a plain listener, a
            // certificate not trusted; the log callback said why): the broker's answer, not
            // the configuration's, and not tried again.
            reportOnce("connecting to \(url) failed: \(errorText(rc)); not tried again")
        } else if rc != MOSQ_ERR_SUCCESS.rawValue {
            // Not reachable yet (refused, no route, a name not resolved): the library's thread
            // tries again; what else fails here is the configuration.
            guard rc == MOSQ_ERR_ERRNO.rawValue || rc == MOSQ_ERR_EAI.rawValue || rc == MOSQ_ERR_NO_CONN.rawValue else {
                throw MQTTError.setup("connecting to \(url): \(errorText(rc))")
            }
            reportOnce("cannot reach \(url): \(errorText(rc)); retrying")
            // libmosquitto's thread reconnects only a client that has once got as far as a
            // socket: this first connection is tried again here until it has.
            retryFirstConnection(after: .seconds(1))
        }
        try check(api.loop_start(client), "network thread")
    }

    /// Tries the first connection again after `delay` (`mosquitto_reconnect_async`, with
    /// what `mosquitto_connect_async` was given), then after twice that up to 30 s, until the
    /// library takes it (its thread then reconnects on its own) or the publisher closes.
    private func retryFirstConnection(after delay: Duration) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delay / .milliseconds(1)))) { [weak self] in
            guard let self, !self.state.withLock({ $0.closing }) else { return }
            let rc = self.api.pointee.reconnect_async(self.client)
            guard rc != MOSQ_ERR_SUCCESS.rawValue else { return }
            self.reportOnce("cannot reach \(self.configuration.url): \(self.errorText(rc)); retrying")
            self.retryFirstConnection(after: min(delay * 2, .seconds(30)))
        }
    }

    deinit {
        api.pointee.loop_stop(client, true)
        api.pointee.destroy(client)
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MQTTPublisher {
        Unmanaged<MQTTPublisher>.fromOpaque(context!).takeUnretainedValue()
    }

    private func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw MQTTError.setup("\(what): \(errorText(rc))") }
    }

    private func errorText(_ rc: Int32) -> String {
        let text: UnsafePointer<CChar>? = rc == MOSQ_ERR_ERRNO.rawValue ? UnsafePointer(strerror(errno)) : api.pointee.strerror(rc)
        guard let text else { return "error \(rc)" }
        return String(cString: text)
    }

    private func reportOnce(_ text: String) {
        let isNew = state.withLock { state in
            defer { state.lastReported = text }
            return state.lastReported != text
        }
        if isNew { report(text) }
    }

    // MARK: - Publishing

    /// Publishes `payload` (UTF-8, a record's JSON without its newline) to `topic`, retained,
    /// QoS 1, unless ``Configuration/queueLimit`` messages are still waiting for their PUBACK:
    /// then it is dropped and counted. Never blocks on the network: libmosquitto queues it and
    /// its thread sends it.
    func publish(_ payload: some Collection<UInt8>, to topic: String) {
        let admitted = state.withLock { state in
            guard state.inFlight < configuration.queueLimit, !state.closing else {
                state.dropped += 1
                return false
            }
            state.inFlight += 1
            return true
        }
        guard admitted else { return }
        send(Array(payload), to: topic)
    }

    /// Publishes a state (a device's presence, `online` or `offline`) to `topic`, retained,
    /// QoS 1, outside ``Configuration/queueLimit``, as the status topic's messages are: a
    /// state dropped would leave the broker's retained one wrong for good.
    func publishState(_ text: String, to topic: String) {
        let open = state.withLock { state in
            guard !state.closing else { return false }
            state.inFlight += 1
            return true
        }
        if open { send(Array(text.utf8), to: topic) }
    }

    /// Publishes without the bound (the status topic's messages); counted as in flight.
    private func send(_ payload: [UInt8], to topic: String) {
        let rc = payload.withUnsafeBytes { bytes in
            api.pointee.publish(client, nil, topic, Int32(bytes.count), bytes.baseAddress, 1, true)
        }
        // MOSQ_ERR_NO_CONN: queued (a QoS 1 message is appended to the client's outgoing list
        // before it is sent), to be sent when the connection is back. Any other error comes
        // before the message is queued (out of memory, a payload too large): it is dropped.
        if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_NO_CONN.rawValue {
            state.withLock { state in
                state.inFlight -= 1
                state.dropped += 1
            }
        }
    }

    // MARK: - Callbacks (libmosquitto's thread)

    /// CONNACK: 0 accepted, else the broker's return code (MQTT 3.1.1 section 3.2.2.3).
    private func connected(_ rc: Int32) {
        guard rc == 0 else {
            reportOnce("\(configuration.url) refused the connection: \(api.pointee.connack_string(rc).map { String(cString: $0) } ?? "code \(rc)")")
            return
        }
        state.withLock { state in
            state.connected = true
            state.lastReported = nil
            state.inFlight += 1
        }
        report("connected to \(configuration.url) as gateway \(configuration.gateway)")
        send(Array(MQTTTopics.online.utf8), to: topics.status)
    }

    /// The connection ended: 0 after ``close(timeout:)``'s DISCONNECT, else lost (the library
    /// reconnects).
    private func disconnected(_ rc: Int32) {
        let wasConnected = state.withLock { state in
            defer { state.connected = false }
            return state.connected && !state.closing
        }
        if wasConnected, rc != 0 {
            reportOnce("connection to \(configuration.url) lost; reconnecting")
        } else if !wasConnected, rc != 0, !state.withLock({ $0.closing }) {
            // A connection that never got as far as CONNACK (a TLS handshake with a plain
            // listener, a broker that closed it at once).
            reportOnce("connecting to \(configuration.url) failed: \(errorText(rc))")
        }
    }

    /// An error libmosquitto logged (an OpenSSL error, with its reason), reported once.
    private func failed(_ message: String) {
        guard !state.withLock({ $0.closing }) else { return }
        reportOnce("\(configuration.url): \(message)")
    }

    /// A PUBACK (QoS 1): one message fewer in flight.
    private func acknowledged() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inFlight = max(0, state.inFlight - 1)
            guard state.inFlight == 0, let waiter = state.drained else { return nil }
            state.drained = nil
            return waiter
        }
        waiter?.resume()
    }

    // MARK: - Ending

    /// Publishes `offline` (retained) on the status topic, waits up to `timeout` for every
    /// message in flight to be acknowledged, then disconnects (a clean DISCONNECT, so the broker
    /// discards the will) and stops libmosquitto's thread. Not cancellable: it runs when the command ends,
    /// whatever ended it (a signal included).
    func close(timeout: Duration) async -> Ending {
        let connected = state.withLock { state in
            state.closing = true
            if state.connected { state.inFlight += 1 }
            return state.connected
        }
        if connected { send(Array(MQTTTopics.offline.utf8), to: topics.status) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                guard state.inFlight > 0, state.connected else { return true }
                state.drained = continuation
                return false
            }
            if resumeNow { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(timeout.components.seconds * 1_000_000_000
                                                                                 + timeout.components.attoseconds / 1_000_000_000))) {
                let waiter = self.state.withLock { state in
                    defer { state.drained = nil }
                    return state.drained
                }
                waiter?.resume()
            }
        }
        api.pointee.disconnect(client)
        api.pointee.loop_stop(client, false)
        return state.withLock { Ending(dropped: $0.dropped, unacknowledged: $0.inFlight) }
    }

    /// What ``close(timeout:)`` counts.
    struct Ending: Sendable, Equatable {
        /// Records dropped at the queue's bound (or refused by libmosquitto).
        var dropped: Int
        /// Messages published and never acknowledged by the time the client disconnected
        /// (the last `offline` included).
        var unacknowledged: Int
    }
}

/// Why `--mqtt` could not start.
enum MQTTError: CommandError {
    /// libmosquitto.so.1 could not be loaded: dlopen's message.
    case libraryUnavailable(String)
    /// libmosquitto refused a setting: which, and its message.
    case setup(String)

    /// 69 (EX_UNAVAILABLE) for a missing library, 64 for a setting refused.
    var status: ExitStatus {
        switch self {
        case .libraryUnavailable: .unavailable
        case .setup: .usage
        }
    }

    var description: String {
        switch self {
        case .libraryUnavailable(let reason): "--mqtt needs libmosquitto (Debian's libmosquitto1): \(reason)"
        case .setup(let reason): "--mqtt: \(reason)"
        }
    }
}

extension MQTTPublisher {
    /// Publishes `record`'s JSON line to `topic`: the line just appended to `output` from
    /// `start` when the output is JSON (not formatted twice), else one formatted here.
    func publish<Record>(_ record: Record, layout: RecordLayout<Record>, appendedTo output: JSONLines?, from start: Int,
                         to topic: String) {
        if let output {
            publish(output.bytes[start..<max(start, output.bytes.count - 1)], to: topic)
        } else {
            var line = JSONLines()
            layout.appendLine(record, to: &line)
            publish(line.bytes.dropLast(), to: topic)
        }
    }
}
