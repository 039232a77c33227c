/// `--mqtt` and the options that go with it, on `scan` and `notify`: publish each record to an
/// MQTT broker as well as printing it (``MQTTPublisher``, ``MQTTTopics``).
struct MQTTOptions: ParsableArguments, Equatable {
    @Option("mqtt", valueName: "url",
            help: "Also publish each record, retained, with QoS 1, to this MQTT broker: mqtt://[user[:password]@]host[:port][/prefix], or mqtts:// for TLS (ports 1883 and 8883, prefix blectl by default). Standard output is unchanged. The topics: MQTT in blectl(1).",
            parser: .mqttURL)
    var url: MQTTBrokerURL?

    @Option("mqtt-gateway", valueName: "name",
            help: "The gateway's topic level under the prefix; the host's short name by default.",
            parser: MQTTTopics.gatewayParser)
    var gateway: String?

    @Option("mqtt-keepalive", valueName: "seconds",
            help: "Seconds between MQTT keepalive pings, 5 to 65535: the broker publishes the last will after 1.5 times this without a word, or as soon as the connection drops.",
            parser: .wholeNumber(in: 5...65535, unit: "seconds"))
    var keepalive: Int = 60

    @Option("mqtt-queue", valueName: "n",
            help: "Records that may wait for the broker's acknowledgement, 1 to 1000000; beyond them new records are dropped and counted.",
            parser: .wholeNumber(in: 1...1_000_000))
    var queueLimit: Int = 10_000

    @Option("mqtt-cafile", valueName: "path",
            help: "With mqtts://, trust the certificate authorities in this PEM file instead of those in /etc/ssl/certs.",
            parser: MQTTOptions.caFileParser)
    var caFile: String?

    /// A file name, completed as one.
    static let caFileParser: ValueParser<String> = {
        var parser = ValueParser.nonEmpty(expecting: "a file name")
        parser.completion = .files
        return parser
    }()

    init() {}

    /// `--mqtt-gateway` and `--mqtt-cafile` need `--mqtt`; `--mqtt-cafile` an `mqtts://` URL.
    mutating func validate() throws(UsageError) {
        for (name, given) in [("--mqtt-gateway", gateway != nil), ("--mqtt-cafile", caFile != nil)] where given && url == nil {
            throw UsageError("\(name) needs --mqtt")
        }
        if caFile != nil, url?.usesTLS == false { throw UsageError("--mqtt-cafile needs an mqtts:// URL") }
    }

    /// How long ending waits for the broker to acknowledge what is in flight.
    static let closeTimeout = Duration.seconds(3)

    /// Runs `body` with a publisher when `--mqtt` is given (nil otherwise), then ends the
    /// publisher whatever ended `body` (``MQTTPublisher/close(timeout:)``) and reports on stderr
    /// what was dropped and never acknowledged.
    /// - Throws: ``MQTTError`` before `body` runs (nothing asked of bluetoothd yet), then what
    ///   `body` throws.
    func withPublisher<Result>(printer: Printer, _ body: (MQTTPublisher?) async throws -> Result) async throws -> Result {
        guard let url else { return try await body(nil) }
        let configuration = MQTTPublisher.Configuration(url: url, gateway: gateway ?? MQTTTopics.shortHostName,
                                                        keepalive: keepalive, queueLimit: queueLimit, caFile: caFile)
        let publisher = try MQTTPublisher(configuration) { text in
            printer.diagnostic(.object([("event", .string("mqtt")), ("message", .string(text))]), text: "mqtt: \(text)")
        }
        let result: Result
        do {
            result = try await body(publisher)
        } catch {
            await end(publisher, printer: printer)
            throw error
        }
        await end(publisher, printer: printer)
        return result
    }

    private func end(_ publisher: MQTTPublisher, printer: Printer) async {
        let ending = await publisher.close(timeout: Self.closeTimeout)
        printer.diagnostic(.object([("event", .string("mqtt_summary")), ("dropped", .int(ending.dropped)),
                                    ("unacknowledged", .int(ending.unacknowledged))]),
                           text: "mqtt: \(ending.dropped) records dropped, \(ending.unacknowledged) messages not acknowledged")
    }
}
