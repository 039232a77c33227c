import Testing
@testable import BlectlCLI
import BlueZKit

@Suite("--mqtt URLs")
struct MQTTBrokerURLTests {
    @Test("good URLs: scheme, credentials, host, port and prefix", arguments: [
        ("mqtt://broker", MQTTBrokerURL(usesTLS: false, host: "broker", port: 1883, username: nil, password: nil, prefix: "blectl")),
        ("mqtt://broker/", MQTTBrokerURL(usesTLS: false, host: "broker", port: 1883, username: nil, password: nil, prefix: "blectl")),
        ("mqtts://broker.example.org", MQTTBrokerURL(usesTLS: true, host: "broker.example.org", port: 8883, username: nil, password: nil, prefix: "blectl")),
        ("mqtt://10.0.0.2:1884/home/ble/", MQTTBrokerURL(usesTLS: false, host: "10.0.0.2", port: 1884, username: nil, password: nil, prefix: "home/ble")),
        ("mqtt://ha:s3cr%40t%3A@broker:1/x", MQTTBrokerURL(usesTLS: false, host: "broker", port: 1, username: "ha", password: "s3cr@t:", prefix: "x")),
        ("mqtts://gateway@broker:65535/p", MQTTBrokerURL(usesTLS: true, host: "broker", port: 65535, username: "gateway", password: nil, prefix: "p")),
        ("mqtt://u:@[::1]:1883/a%20b", MQTTBrokerURL(usesTLS: false, host: "::1", port: 1883, username: "u", password: "", prefix: "a b")),
        ("mqtt://[fe80::1]", MQTTBrokerURL(usesTLS: false, host: "fe80::1", port: 1883, username: nil, password: nil, prefix: "blectl")),
    ])
    func good(text: String, expected: MQTTBrokerURL) throws {
        #expect(try MQTTBrokerURL(parsing: text) == expected)
    }

    @Test("bad URLs: what was expected instead", arguments: [
        ("", "a URL starting with mqtt:// or mqtts://"),
        ("tcp://broker", "a URL starting with mqtt:// or mqtts://"),
        ("MQTT://broker", "a URL starting with mqtt:// or mqtts://"),
        ("mqtt://", "a host name or address after mqtt://"),
        ("mqtts://:8883", "a host name or address after mqtts://"),
        ("mqtt://user@/x", "a host name or address after mqtt://"),
        ("mqtt://broker:0", "a port from 1 to 65535 after the host"),
        ("mqtt://broker:65536", "a port from 1 to 65535 after the host"),
        ("mqtt://broker:", "a port from 1 to 65535 after the host"),
        ("mqtt://broker:-1", "a port from 1 to 65535 after the host"),
        ("mqtt://broker:http", "a port from 1 to 65535 after the host"),
        ("mqtt://[::1", "a ']' closing the IPv6 address"),
        ("mqtt://[::1]x", "':port' or nothing after the IPv6 address"),
        ("mqtt://:pw@broker", "a user name before ':' or '@'"),
        ("mqtt://u%4@broker", "two hex digits after each '%'"),
        ("mqtt://u%ff@broker", "UTF-8 after percent-decoding"),
        ("mqtt://broker/a//b", "a topic prefix with no empty level (no '//')"),
        ("mqtt://broker/a/+", "a topic prefix without the wildcards '+' and '#'"),
        ("mqtt://broker/a%23", "a topic prefix without the wildcards '+' and '#'"),
        ("mqtt://broker/$SYS", "a topic prefix not beginning with '$' (the broker's topics)"),
        ("mqtt://broker/%24x/y", "a topic prefix not beginning with '$' (the broker's topics)"),
        ("mqtt://broker/a#b", "a URL without '?' or '#' (percent-encode them in a user or password)"),
        ("mqtt://broker/?retain=1", "a URL without '?' or '#' (percent-encode them in a user or password)"),
    ])
    func bad(text: String, expected: String) {
        #expect(throws: ExpectedValue(expected)) { try MQTTBrokerURL(parsing: text) }
    }

    @Test("described with the password hidden")
    func description() throws {
        #expect(try MQTTBrokerURL(parsing: "mqtts://ha:secret@broker/home").description == "mqtts://ha:***@broker:8883/home")
        #expect(try MQTTBrokerURL(parsing: "mqtt://[::1]").description == "mqtt://[::1]:1883/blectl")
    }

    @Test("topics: status, a device's advertisement, a characteristic's value")
    func topics() throws {
        let topics = MQTTTopics(prefix: "home/ble", gateway: "hall")
        #expect(topics.status == "home/ble/hall/status")
        #expect(topics.advertisement(try #require(BluetoothAddress("C0:FF:EE:00:00:01"))) == "home/ble/hall/C0:FF:EE:00:00:01/advertisement")
        #expect(topics.value(try #require(BluetoothAddress("C0:FF:EE:00:00:04")), characteristic: try #require(BluetoothUUID("2a19")))
                == "home/ble/hall/C0:FF:EE:00:00:04/2a19/value")
    }

    @Test("gateway names: one topic level", arguments: ["", "a/b", "a+", "#"])
    func badGateway(name: String) {
        #expect(throws: ExpectedValue("one topic level: not empty, without '/', '+' or '#'")) { try MQTTTopics.gatewayParser.parse(name) }
    }

    @Test("options that need --mqtt, or an mqtts URL", arguments: [
        (["scan", "--mqtt-gateway", "hall"], "--mqtt-gateway needs --mqtt"),
        (["notify", "C0:FF:EE:00:00:04", "2a19", "--mqtt-cafile", "ca.pem"], "--mqtt-cafile needs --mqtt"),
        (["scan", "--mqtt", "mqtt://broker", "--mqtt-cafile", "ca.pem"], "--mqtt-cafile needs an mqtts:// URL"),
    ])
    func needsMQTT(arguments: [String], message: String) {
        #expect(usageError(arguments)?.message == message)
    }
}
