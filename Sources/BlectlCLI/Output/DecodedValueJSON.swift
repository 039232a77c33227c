import BlueZKit

/// `decoded` in read and notify: a characteristic's value decoded by its format (the GATT
/// Specification Supplement's for a SIG characteristic, else its Presentation Format
/// descriptor's; ``CharacteristicFormat``), `null` when it has none:
///
/// - `{"name":"Temperature","fields":[{"name":"Temperature","value":20.58,"unit":"degree Celsius"}]}`:
///   the characteristic's name and each field present, in order, with its represented value
///   (a number: raw × M × 10^d × 2^b; an integer for unscaled integers and flags; a string
///   for text; an array for a repeated field) and its unit (`null` when unitless).
/// - A special value has `"value":null` and `status`, what it stands for in the
///   specification's words (`"value is not known"`, a medfloat's `"NaN"`, `"NRes"`, ...).
/// - Bytes the format does not explain: `{"name":"Temperature","undecodable":"truncated"}`
///   (or `"trailing bytes"`, `"invalid UTF-8"`), as scan's `decoded` says `undecodable`.
struct DecodedValueJSON: JSONFieldValue {
    let decoded: DecodedCharacteristicValue?

    /// How long `read` and `notify` wait for a Presentation Format descriptor's value, at
    /// most: decoding is extra, so a descriptor that does not answer costs this, not the
    /// command's time (the value is then printed with `decoded` null).
    static let presentationFormatReadLimit: Duration = .seconds(2)

    init(_ decoded: DecodedCharacteristicValue?) {
        self.decoded = decoded
    }

    var jsonValue: JSONValue {
        switch decoded {
        case nil: .null
        case .undecodable(let name, let reason)?: .object([("name", .string(name)), ("undecodable", .string(reason))])
        case .decoded(let name, let fields)?: .object([("name", .string(name)), ("fields", .array(fields.map(Self.json)))])
        }
    }

    private static func json(_ field: DecodedCharacteristicValue.Field) -> JSONValue {
        var members: [(String, JSONValue)] = [("name", .string(field.name)), ("value", field.value.map(json) ?? .null),
                                              ("unit", .optional(field.unit))]
        if let status = field.status { members.append(("status", .string(status))) }
        return .object(members)
    }

    private static func json(_ value: DecodedCharacteristicValue.Value) -> JSONValue {
        switch value {
        case .integer(let i): .int(i)
        case .number(let d): .double(d)
        case .text(let t): .string(t)
        case .list(let values): .array(values.map(json))
        }
    }

    /// The bytes ``jsonValue`` serializes to, written with no ``JSONValue`` built: notify
    /// writes one per value.
    func write(to lines: inout JSONLines) {
        switch decoded {
        case nil:
            JSONValue.writeLiteral("null", into: &lines.bytes)
        case .undecodable(let name, let reason)?:
            JSONValue.writeLiteral(#"{"name":"#, into: &lines.bytes)
            JSONValue.writeString(name, into: &lines.bytes)
            JSONValue.writeLiteral(#","undecodable":"#, into: &lines.bytes)
            JSONValue.writeString(reason, into: &lines.bytes)
            lines.bytes.append(UInt8(ascii: "}"))
        case .decoded(let name, let fields)?:
            JSONValue.writeLiteral(#"{"name":"#, into: &lines.bytes)
            JSONValue.writeString(name, into: &lines.bytes)
            JSONValue.writeLiteral(#","fields":["#, into: &lines.bytes)
            for (index, field) in fields.enumerated() {
                JSONValue.writeLiteral(index == 0 ? #"{"name":"# : #",{"name":"#, into: &lines.bytes)
                JSONValue.writeString(field.name, into: &lines.bytes)
                JSONValue.writeLiteral(#","value":"#, into: &lines.bytes)
                if let value = field.value { Self.write(value, into: &lines.bytes) } else {
                    JSONValue.writeLiteral("null", into: &lines.bytes)
                }
                JSONValue.writeLiteral(#","unit":"#, into: &lines.bytes)
                if let unit = field.unit { JSONValue.writeString(unit, into: &lines.bytes) } else {
                    JSONValue.writeLiteral("null", into: &lines.bytes)
                }
                if let status = field.status {
                    JSONValue.writeLiteral(#","status":"#, into: &lines.bytes)
                    JSONValue.writeString(status, into: &lines.bytes)
                }
                lines.bytes.append(UInt8(ascii: "}"))
            }
            JSONValue.writeLiteral("]}", into: &lines.bytes)
        }
    }

    private static func write(_ value: DecodedCharacteristicValue.Value, into out: inout [UInt8]) {
        switch value {
        case .integer(let i): JSONValue.writeInt(i, into: &out)
        case .number, .text, .list: json(value).write(into: &out)
        }
    }

    // MARK: - Text

    /// For people: `Temperature 20.58 degree Celsius`; several fields as
    /// `Heart Rate Measurement: Flags 16, Heart Rate Measurement Value (8 bit resolution) 72 beats per minute, RR-interval [1024, 980]`;
    /// a special value by its status (`Temperature value is not known`);
    /// `Temperature undecodable (truncated)`; `-` when not decodable.
    var text: String {
        switch decoded {
        case nil: "-"
        case .undecodable(let name, let reason)?: "\(Records.printable(name)) undecodable (\(reason))"
        case .decoded(let name, let fields)?:
            if fields.count == 1, fields[0].name == name { Self.text(fields[0]) } else {
                Records.printable(name) + ": " + fields.map(Self.text).joined(separator: ", ")
            }
        }
    }

    private static func text(_ field: DecodedCharacteristicValue.Field) -> String {
        let value = field.value.map(text) ?? field.status ?? "-"
        return Records.printable(field.name) + " " + value + (field.value != nil ? field.unit.map { " " + $0 } ?? "" : "")
    }

    private static func text(_ value: DecodedCharacteristicValue.Value) -> String {
        switch value {
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .text(let t): "\"" + Records.printable(t) + "\""
        case .list(let values): "[" + values.map(text).joined(separator: ", ") + "]"
        }
    }
}
