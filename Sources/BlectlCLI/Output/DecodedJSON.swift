import BlueZKit

/// `decoded` in scan, info and devices: the beacon formats found in the manufacturer and
/// service data (``AdvertisedFormats``), keyed by format in this order: `ibeacon`, `eddystone`,
/// `bthome`; `{}` when the device advertises none (as `manufacturer_data` is `{}` when empty).
/// A format found but not decodable is `{"undecodable": "why"}`. Field names are the
/// specifications' (Apple's Proximity Beacon Specification, Google's Eddystone, bthome.io),
/// in snake case:
///
/// - `ibeacon`: `{"proximity_uuid":"e2c56db5-…","major":1,"minor":2,"measured_power":-59}` (dBm at 1 m)
/// - `eddystone`: `{"frame":"uid","ranging_data":-20,"namespace":"00112233445566778899","instance":"aabbccddeeff"}`,
///   `{"frame":"url","tx_power":-21,"url":"https://example.com/"}`, or
///   `{"frame":"tlm","version":0,"vbatt":3000,"temp":21.5,"adv_cnt":100,"sec_cnt":1234}`
///   (mV, °C or null when not measured, PDUs, 0.1 s)
/// - `bthome`: `{"version":2,"trigger_based":false,"encrypted":false,"counter":null,"objects":[{"id":2,"name":"temperature","value":25.0,"unit":"°C"}]}`
///   (`encrypted` true and the frame's `counter` when decrypted with a `--bindkey`);
///   an event object has `event` (its name, null for "none") instead of `value` and `unit`,
///   a dimmer's `steps`, a command's `args` (hex).
struct DecodedJSON: JSONFieldValue {
    let formats: AdvertisedFormats

    /// - Parameter bthomeBindKeys: the keys that decrypt encrypted BTHome frames, by address.
    init(_ properties: DeviceProperties, bthomeBindKeys: [BluetoothAddress: BTHomeBindKey] = [:]) {
        formats = bthomeBindKeys.isEmpty ? properties.advertisedFormats : properties.advertisedFormats(bthomeBindKeys: bthomeBindKeys)
    }

    var jsonValue: JSONValue {
        var members: [(String, JSONValue)] = []
        if let format = formats.iBeacon { members.append(("ibeacon", Self.json(format, Self.json))) }
        if let format = formats.eddystone { members.append(("eddystone", Self.json(format, Self.json))) }
        if let format = formats.bthome { members.append(("bthome", Self.json(format, Self.json))) }
        return .object(members)
    }

    func write(to lines: inout JSONLines) {
        if formats.isEmpty { JSONValue.writeLiteral("{}", into: &lines.bytes) } else { jsonValue.write(into: &lines.bytes) }
    }

    private static func json<Frame>(_ format: AdvertisedFormat<Frame>, _ frame: (Frame) -> JSONValue) -> JSONValue {
        switch format {
        case .decoded(let decoded): frame(decoded)
        case .undecodable(let reason): .object([("undecodable", .string(reason))])
        }
    }

    static func json(_ b: IBeacon) -> JSONValue {
        .object([("proximity_uuid", .string(b.proximityUUID.description)), ("major", .int(Int(b.major))),
                 ("minor", .int(Int(b.minor))), ("measured_power", .int(Int(b.measuredPower)))])
    }

    static func json(_ e: Eddystone) -> JSONValue {
        switch e {
        case .uid(let uid):
            .object([("frame", .string("uid")), ("ranging_data", .int(Int(uid.rangingData))),
                     ("namespace", .string(uid.namespace.hexString)), ("instance", .string(uid.instance.hexString))])
        case .url(let url):
            .object([("frame", .string("url")), ("tx_power", .int(Int(url.txPower))), ("url", .string(url.url))])
        case .tlm(let tlm):
            .object([("frame", .string("tlm")), ("version", .int(Int(tlm.version))), ("vbatt", .int(Int(tlm.batteryVoltage))),
                     ("temp", tlm.temperature.map { .double($0) } ?? .null), ("adv_cnt", .int(Int(tlm.advertisingCount))),
                     ("sec_cnt", .int(Int(tlm.secondsCount)))])
        }
    }

    static func json(_ packet: BTHome) -> JSONValue {
        .object([("version", .int(packet.version)), ("trigger_based", .bool(packet.triggerBased)),
                 ("encrypted", .bool(packet.encrypted)), ("counter", .optional(packet.counter.map(Int.init))),
                 ("objects", .array(packet.objects.map(json)))])
    }

    static func json(_ object: BTHome.Object) -> JSONValue {
        var members: [(String, JSONValue)] = [("id", .int(Int(object.id))), ("name", .string(object.name))]
        switch object.value {
        case .event(let name, let steps, let arguments):
            members.append(("event", .optional(name)))
            if let steps { members.append(("steps", .int(steps))) }
            if let arguments { members.append(("args", .string(arguments.hexString))) }
            return .object(members)
        case .integer(let i): members.append(("value", .int(i)))
        case .number(let d): members.append(("value", .double(d)))
        case .bool(let b): members.append(("value", .bool(b)))
        case .text(let t): members.append(("value", .string(t)))
        case .bytes(let b): members.append(("value", .string(b.hexString)))
        case .timestamp(let t): members.append(("value", .int(Int(t))))
        case .version(let v): members.append(("value", .string(v)))
        }
        members.append(("unit", .optional(object.unit)))
        return .object(members)
    }

    // MARK: - Text

    /// For people: `ibeacon e2c56db5-… major 1 minor 2 measured power -59 dBm;
    /// bthome temperature 25.0 °C, humidity 50.55 %`, with `(encrypted, counter 7)` after a
    /// decrypted frame's objects; `-` when none.
    var text: String {
        var parts: [String] = []
        if let format = formats.iBeacon { parts.append("ibeacon " + Self.text(format) { b in
            "\(b.proximityUUID) major \(b.major) minor \(b.minor) measured power \(b.measuredPower) dBm"
        }) }
        if let format = formats.eddystone { parts.append("eddystone " + Self.text(format) { e in
            switch e {
            case .uid(let uid): "uid \(uid.namespace.hexString) \(uid.instance.hexString) ranging \(uid.rangingData) dBm"
            case .url(let url): "url \(Records.printable(url.url)) tx power \(url.txPower) dBm"
            case .tlm(let t):
                "tlm battery \(t.batteryVoltage) mV temperature \(t.temperature.map { "\($0) °C" } ?? "-") adv \(t.advertisingCount) uptime \(Double(t.secondsCount) / 10) s"
            }
        }) }
        if let format = formats.bthome { parts.append("bthome " + Self.text(format) { packet in
            packet.objects.map(Self.text).joined(separator: ", ") + (packet.counter.map { " (encrypted, counter \($0))" } ?? "")
        }) }
        return parts.isEmpty ? "-" : parts.joined(separator: "; ")
    }

    private static func text<Frame>(_ format: AdvertisedFormat<Frame>, _ frame: (Frame) -> String) -> String {
        switch format {
        case .decoded(let decoded): frame(decoded)
        case .undecodable(let reason): "undecodable (\(reason))"
        }
    }

    private static func text(_ object: BTHome.Object) -> String {
        let value: String = switch object.value {
        case .event(let name, let steps, let arguments):
            (name ?? "none") + (steps.map { " \($0) steps" } ?? "") + (arguments.map { $0.isEmpty ? "" : " " + $0.hexString } ?? "")
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .bool(let b): Records.yesNo(b)
        case .text(let t): Records.printable(t)
        case .bytes(let b): b.hexString
        case .timestamp(let t): Records.rfc3339(sinceEpoch: .seconds(Int64(t)))
        case .version(let v): v
        }
        return object.name + " " + value + (object.unit.map { " " + $0 } ?? "")
    }
}
