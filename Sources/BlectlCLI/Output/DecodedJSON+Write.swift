import BlueZKit

// `decoded` written straight into a scan line: the bytes ``DecodedJSON/jsonValue`` serializes
// to, with no JSONValue tree made and freed per line (a gateway writes one per advertisement).
extension DecodedJSON {
    func write(to lines: inout JSONLines) {
        var object = JSONObjectWriter(into: &lines.bytes)
        if let format = formats.iBeacon {
            object.key("ibeacon", into: &lines.bytes)
            Self.write(format, into: &lines.bytes, Self.write)
        }
        if let format = formats.eddystone {
            object.key("eddystone", into: &lines.bytes)
            Self.write(format, into: &lines.bytes, Self.write)
        }
        if let format = formats.bthome {
            object.key("bthome", into: &lines.bytes)
            Self.write(format, into: &lines.bytes, Self.write)
        }
        object.end(into: &lines.bytes)
    }

    private static func write<Frame>(_ format: AdvertisedFormat<Frame>, into out: inout [UInt8],
                                     _ frame: (Frame, inout [UInt8]) -> Void) {
        switch format {
        case .decoded(let decoded):
            frame(decoded, &out)
        case .undecodable(let reason):
            var object = JSONObjectWriter(into: &out)
            object.key("undecodable", into: &out)
            JSONValue.writeString(reason, into: &out)
            object.end(into: &out)
        }
    }

    private static func write(_ b: IBeacon, into out: inout [UInt8]) {
        var object = JSONObjectWriter(into: &out)
        object.key("proximity_uuid", into: &out)
        JSONValue.writeString(b.proximityUUID.description, into: &out)
        object.key("major", into: &out)
        JSONValue.writeInt(Int(b.major), into: &out)
        object.key("minor", into: &out)
        JSONValue.writeInt(Int(b.minor), into: &out)
        object.key("measured_power", into: &out)
        JSONValue.writeInt(Int(b.measuredPower), into: &out)
        object.end(into: &out)
    }

    private static func write(_ e: Eddystone, into out: inout [UInt8]) {
        var object = JSONObjectWriter(into: &out)
        object.key("frame", into: &out)
        switch e {
        case .uid(let uid):
            JSONValue.writeLiteral("\"uid\"", into: &out)
            object.key("ranging_data", into: &out)
            JSONValue.writeInt(Int(uid.rangingData), into: &out)
            object.key("namespace", into: &out)
            JSONValue.writeHex(uid.namespace, into: &out)
            object.key("instance", into: &out)
            JSONValue.writeHex(uid.instance, into: &out)
        case .url(let url):
            JSONValue.writeLiteral("\"url\"", into: &out)
            object.key("tx_power", into: &out)
            JSONValue.writeInt(Int(url.txPower), into: &out)
            object.key("url", into: &out)
            JSONValue.writeString(url.url, into: &out)
        case .tlm(let tlm):
            JSONValue.writeLiteral("\"tlm\"", into: &out)
            object.key("version", into: &out)
            JSONValue.writeInt(Int(tlm.version), into: &out)
            object.key("vbatt", into: &out)
            JSONValue.writeInt(Int(tlm.batteryVoltage), into: &out)
            object.key("temp", into: &out)
            (tlm.temperature.map { JSONValue.double($0) } ?? .null).write(into: &out)
            object.key("adv_cnt", into: &out)
            JSONValue.writeInt(Int(tlm.advertisingCount), into: &out)
            object.key("sec_cnt", into: &out)
            JSONValue.writeInt(Int(tlm.secondsCount), into: &out)
        }
        object.end(into: &out)
    }

    private static func write(_ packet: BTHome, into out: inout [UInt8]) {
        var object = JSONObjectWriter(into: &out)
        object.key("version", into: &out)
        JSONValue.writeInt(packet.version, into: &out)
        object.key("trigger_based", into: &out)
        JSONValue.bool(packet.triggerBased).write(into: &out)
        object.key("encrypted", into: &out)
        JSONValue.bool(packet.encrypted).write(into: &out)
        object.key("counter", into: &out)
        (packet.counter.map { JSONValue.int(Int($0)) } ?? .null).write(into: &out)
        object.key("objects", into: &out)
        out.append(UInt8(ascii: "["))
        for (i, member) in packet.objects.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            write(member, into: &out)
        }
        out.append(UInt8(ascii: "]"))
        object.end(into: &out)
    }

    private static func write(_ member: BTHome.Object, into out: inout [UInt8]) {
        var object = JSONObjectWriter(into: &out)
        object.key("id", into: &out)
        JSONValue.writeInt(Int(member.id), into: &out)
        object.key("name", into: &out)
        JSONValue.writeString(member.name, into: &out)
        if case .event(let name, let steps, let arguments) = member.value {
            object.key("event", into: &out)
            JSONValue.optional(name).write(into: &out)
            if let steps {
                object.key("steps", into: &out)
                JSONValue.writeInt(steps, into: &out)
            }
            if let arguments {
                object.key("args", into: &out)
                JSONValue.writeHex(arguments, into: &out)
            }
            object.end(into: &out)
            return
        }
        object.key("value", into: &out)
        switch member.value {
        case .event: break
        case .integer(let i): JSONValue.writeInt(i, into: &out)
        case .number(let d): JSONValue.double(d).write(into: &out)
        case .bool(let b): JSONValue.bool(b).write(into: &out)
        case .text(let t): JSONValue.writeString(t, into: &out)
        case .bytes(let b): JSONValue.writeHex(b, into: &out)
        case .timestamp(let t): JSONValue.writeInt(Int(t), into: &out)
        case .version(let v): JSONValue.writeString(v, into: &out)
        }
        object.key("unit", into: &out)
        JSONValue.optional(member.unit).write(into: &out)
        object.end(into: &out)
    }
}
