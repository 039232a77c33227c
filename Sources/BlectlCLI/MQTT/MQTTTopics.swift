import BlueZKit
#if canImport(Glibc)
import Glibc
#endif

/// The topics `--mqtt` publishes to, all under `<prefix>/<gateway>/` (man/blectl.1, MQTT):
///
/// - `<prefix>/<gateway>/status`: `online` or `offline`, retained; `offline` is also the will;
/// - `<prefix>/<gateway>/<ADDRESS>/advertisement`: `scan`'s record of the device, retained;
/// - `<prefix>/<gateway>/<ADDRESS>/presence`: with `scan --lost-after`, `online` or `offline`
///   (lost), retained;
/// - `<prefix>/<gateway>/<ADDRESS>/<CHARACTERISTIC>/value`: `notify`'s record of the value,
///   retained, the characteristic's UUID as the record gives it (`2a19`, or the whole UUID).
///
/// ADDRESS is as blectl prints it, `C0:FF:EE:00:00:01`. Every level is a topic name's level as
/// MQTT 3.1.1 section 4.7 defines them (no wildcard, no empty level).
struct MQTTTopics: Sendable, Equatable {
    /// `<prefix>/<gateway>`.
    let base: String

    static let online = "online"
    static let offline = "offline"

    init(prefix: String, gateway: String) {
        base = prefix + "/" + gateway
    }

    var status: String { base + "/status" }

    func advertisement(_ address: BluetoothAddress) -> String {
        "\(base)/\(address)/advertisement"
    }

    /// With `scan --lost-after`: `online` when the device is printed as new, `offline` when
    /// it is lost.
    func presence(_ address: BluetoothAddress) -> String {
        "\(base)/\(address)/presence"
    }

    func value(_ address: BluetoothAddress, characteristic: BluetoothUUID) -> String {
        "\(base)/\(address)/\(characteristic.shortString)/value"
    }

    /// The host's name up to its first dot (as `hostname -s`), `blectl` if it has none.
    static var shortHostName: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "blectl" }
        let name = String(cString: buffer).split(separator: ".").first.map(String.init) ?? ""
        return (try? gatewayParser.parse(name)) ?? "blectl"
    }

    /// A gateway name: one topic level, not empty, no `/`, `+`, `#` or NUL.
    static let gatewayParser = ValueParser(noun: "gateway name", parse: { (text: String) throws(ExpectedValue) -> String in
        guard !text.isEmpty, !text.contains(where: { "/+#\0".contains($0) }) else {
            throw ExpectedValue("one topic level: not empty, without '/', '+' or '#'")
        }
        return text
    }, describe: { $0 })
}

extension ValueParser where Value == MQTTBrokerURL {
    /// `--mqtt`'s `mqtt://[user[:password]@]host[:port][/prefix]` (``MQTTBrokerURL``).
    static var mqttURL: ValueParser<MQTTBrokerURL> {
        ValueParser(noun: "URL", parse: { (text: String) throws(ExpectedValue) -> MQTTBrokerURL in
            try MQTTBrokerURL(parsing: text)
        }, describe: { $0.description })
    }
}
