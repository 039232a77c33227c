import BlueZKit

/// How blectl's records show a property BlueZKit declares in one of its tables
/// (``DeviceProperties``, ``AdapterProperties``, ...) when nothing shows it its own way: keyed
/// by the D-Bus name in snake case (`TxPower` → `tx_power`, `UUIDs` → `uuids`), its value as
/// JSON by its type (a string, a number, a boolean, a list, null for none), in text for people
/// with `-` for none, and in a table's cell in a compact form.
enum PropertyFields {
    /// The field of `declaration`, its value read from the typed record `record` of the source.
    static func field<Source, Record>(_ declaration: PropertyDeclaration<Record>,
                                      of record: @escaping @Sendable (Source) -> Record) -> RecordField<Source> {
        let value = declaration.value
        return RecordField(snakeCase(declaration.name), json: { value(record($0)) }, text: { text(value(record($0))) },
                           cell: { cell(value(record($0))) })
    }

    /// A value as JSON (``ReflectedPropertyValue/jsonValue``); null for none.
    static func json(_ value: ReflectedPropertyValue?) -> JSONValue {
        value.jsonValue
    }

    /// A value for people: `yes`/`no`, UUIDs with the SIG's names, `-` for none or an empty list.
    static func text(_ value: ReflectedPropertyValue?) -> String {
        switch value {
        case nil: "-"
        case .string(let s): Records.printable(s)
        case .bool(let b): Records.yesNo(b)
        case .integer(let i): String(i)
        case .uuid(let uuid): Records.named(uuid)
        case .uuids(let uuids): uuids.isEmpty ? "-" : uuids.map(Records.named).joined(separator: ", ")
        case .strings(let strings): strings.isEmpty ? "-" : Records.printable(strings.joined(separator: ", "))
        case .bytes(let bytes): Records.hexForPeople(bytes)
        case .manufacturerData(let data): Records.manufacturerDataText(data)
        case .serviceData(let data): Records.serviceDataText(data)
        }
    }

    /// A value in a table's cell: as ``text(_:)``, lists without spaces or names.
    static func cell(_ value: ReflectedPropertyValue?) -> String {
        switch value {
        case .uuid(let uuid): uuid.shortString
        case .uuids(let uuids): uuids.isEmpty ? "-" : uuids.map(\.shortString).joined(separator: ",")
        case .strings(let strings): strings.isEmpty ? "-" : Records.printable(strings.joined(separator: ","))
        case .manufacturerData(let data): Records.manufacturerDataText(data, separator: ",")
        case .serviceData(let data): Records.serviceDataText(data, separator: ",")
        default: text(value)
        }
    }

    /// The D-Bus name in snake case: `TxPower` → `tx_power`, `RSSI` → `rssi`, `UUIDs` →
    /// `uuids`, `ServicesResolved` → `services_resolved`, `PowerState` → `power_state`.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        let characters = Array(name)
        for (i, c) in characters.enumerated() {
            // A word starts at an upper-case letter after a lower-case one, or before one.
            let startsWord = c.isUppercase && i > 0
                && (characters[i - 1].isLowercase || (i + 1 < characters.count && characters[i + 1].isLowercase && characters[i + 1] != "s"))
            if startsWord { out.append("_") }
            out.append(contentsOf: c.lowercased())
        }
        return out
    }
}

/// A property's value as JSON: strings, numbers and booleans as themselves, UUIDs by their
/// short form, lists as arrays, bytes and data as lowercase hex (data keyed by company
/// identifier or UUID).
extension ReflectedPropertyValue: JSONFieldValue {
    var jsonValue: JSONValue {
        switch self {
        case .string(let s): .string(s)
        case .bool(let b): .bool(b)
        case .integer(let i): .int(i)
        case .uuid(let uuid): .string(uuid.shortString)
        case .uuids(let uuids): UUIDListJSON(uuids: uuids).jsonValue
        case .strings(let strings): .array(strings.map { .string($0) })
        case .bytes(let bytes): HexBytes(bytes: bytes).jsonValue
        case .manufacturerData(let data): ManufacturerDataJSON(data: data).jsonValue
        case .serviceData(let data): ServiceDataJSON(data: data).jsonValue
        }
    }

    func write(to lines: inout JSONLines) {
        switch self {
        case .string(let s): s.write(to: &lines)
        case .bool(let b): b.write(to: &lines)
        case .integer(let i): i.write(to: &lines)
        case .uuids(let uuids): UUIDListJSON(uuids: uuids).write(to: &lines)
        case .bytes(let bytes): HexBytes(bytes: bytes).write(to: &lines)
        case .manufacturerData(let data): ManufacturerDataJSON(data: data).write(to: &lines)
        case .serviceData(let data): ServiceDataJSON(data: data).write(to: &lines)
        case .uuid, .strings: jsonValue.write(into: &lines.bytes)
        }
    }
}
