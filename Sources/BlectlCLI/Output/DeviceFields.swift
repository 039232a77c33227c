import BlueZKit

/// A record about one device made from its Device1 properties: `scan`'s (``Advertisement``)
/// and `info`'s and `devices`' (``DeviceInfo``).
protocol DeviceRecordSource: Sendable {
    /// The Device1 properties the record shows.
    var properties: DeviceProperties { get }
    /// Device1.Address, else the address in the object path.
    var address: BluetoothAddress { get }
    /// Device1.Name when it is a real name (not empty, not the address).
    var name: String? { get }
}

extension Advertisement: DeviceRecordSource {}
extension DeviceInfo: DeviceRecordSource {}

/// How blectl's records show the Device1 properties BlueZKit declares
/// (``DeviceProperties``): one field per property, in the table's order, keyed by the D-Bus
/// name in snake case (`TxPower` → `tx_power`, `UUIDs` → `uuids`), its value as JSON by its
/// type (a string, a number, a boolean, null for none), and in text `-` for none. A property
/// added to the table shows in `info` and `devices` (and in `scan` when it is an
/// advertisement's) with no change here; the properties listed below are shown their own way.
enum DeviceFields {
    /// Which record: a scan's line, or `info`'s object (and `devices`' lines).
    enum Record {
        case scan
        case info
    }

    /// The fields of the properties in `table`, as `record` shows them. Device1.Adapter is
    /// left to the record (both show the adapter's name, not its path).
    static func fields<Source: DeviceRecordSource>(_ table: PropertyTable<DeviceProperties>, for record: Record) -> [RecordField<Source>] {
        table.declarations.flatMap { declaration in fields(declaration.name, value: declaration.value, for: record) as [RecordField<Source>] }
    }

    private static func fields<Source: DeviceRecordSource>(
        _ name: String, value: @escaping @Sendable (DeviceProperties) -> ReflectedPropertyValue?, for record: Record
    ) -> [RecordField<Source>] {
        let key = snakeCase(name)
        switch (name, record) {
        case ("Adapter", _):
            return []
        case ("Address", _):
            return [RecordField(key, json: { $0.address.description }, text: { $0.address.description })]
        case ("Name", _):
            return [RecordField(key, json: { $0.name }, text: { $0.name.map(Records.printable) ?? "-" })]
        case ("RSSI", _):
            return [RecordField(key, json: { $0.properties.rssi }, text: { dBm($0.properties.rssi) })]
        case ("TxPower", _):
            return [RecordField(key, json: { $0.properties.txPower }, text: { dBm($0.properties.txPower) })]
        case ("Connected", .scan):
            return []   // ``scanConnected``, at the end of the line
        case ("Appearance", .scan):
            return [RecordField(key, json: { $0.properties.appearance.map(Records.appearance) ?? .null },
                                text: { appearanceText($0.properties.appearance) })]
        case ("Appearance", .info):
            return [RecordField(key, json: { $0.properties.appearance.map(Int.init) },
                                text: { $0.properties.appearance.map { Records.hex($0, digits: 4) } ?? "-" })]
        case ("Class", _):
            return [RecordField(key, json: { $0.properties.deviceClass.map(Int.init) },
                                text: { $0.properties.deviceClass.map { Records.hex($0, digits: 6) } ?? "-" })]
        case ("UUIDs", .scan):
            return [RecordField(key, json: { uuidsJSON($0.properties.uuids ?? []) }, text: { s in
                let uuids = s.properties.uuids ?? []
                return uuids.isEmpty ? "-" : uuids.map { uuid in
                    uuid.shortString + (AssignedNumbers.name(for: uuid).map { " (\(Records.printable($0)))" } ?? "")
                }.joined(separator: ",")
            })]
        case ("ManufacturerData", .scan):
            return [
                RecordField(key, json: { ManufacturerDataJSON(data: $0.properties.manufacturerData ?? [:]) }, text: { s in
                    let data = s.properties.manufacturerData ?? [:]
                    return data.isEmpty ? "-" : data.sorted { $0.key < $1.key }.map { id, bytes in
                        Records.hex4(id) + "=" + bytes.hexString + (AssignedNumbers.companyName(for: id).map { " (\(Records.printable($0)))" } ?? "")
                    }.joined(separator: ",")
                }),
                // The SIG's names of the companies, in text beside each identifier above.
                RecordField("company", json: { CompanyNamesJSON(data: $0.properties.manufacturerData ?? [:]) }, text: { _ in "" }),
            ]
        case ("ServiceData", .scan):
            return [
                RecordField(key, json: { Records.serviceData($0.properties.serviceData ?? [:]) },
                            text: { Records.serviceDataText($0.properties.serviceData ?? [:], separator: ",", named: true) }),
                // The SIG's names of the UUIDs listed and of the service data's, in text beside each.
                RecordField("service_names", json: { s in
                    let uuids = s.properties.uuids ?? [], data = s.properties.serviceData ?? [:]
                    return uuids.isEmpty && data.isEmpty ? .object([]) : Records.serviceNames(uuids + data.keys)
                }, text: { _ in "" }),
            ]
        default:
            return [RecordField(key, json: { json(value($0.properties)) }, text: { text(value($0.properties)) },
                                cell: { cell(value($0.properties)) })]
        }
    }

    /// Whether a scan's device is connected (false when BlueZ does not say): near the end of
    /// a scan's line, after the advertised data, where scripts have always found it.
    static func scanConnected<Source: DeviceRecordSource>() -> RecordField<Source> {
        RecordField("connected", json: { $0.properties.connected ?? false }, text: { Records.yesNo($0.properties.connected ?? false) })
    }

    /// The fields a scan's text shows beside others rather than in a column of their own.
    static let scanTextOmitted: Set<String> = ["company", "service_names"]

    // MARK: - Values by type

    /// A value as JSON: strings, numbers and booleans as themselves, UUIDs by their short
    /// form, data as lowercase hex keyed by company identifier or UUID; null for none.
    static func json(_ value: ReflectedPropertyValue?) -> JSONValue {
        switch value {
        case nil: .null
        case .string(let s): .string(s)
        case .bool(let b): .bool(b)
        case .integer(let i): .int(i)
        case .uuids(let uuids): uuidsJSON(uuids)
        case .manufacturerData(let data): ManufacturerDataJSON(data: data).jsonValue
        case .serviceData(let data): Records.serviceData(data)
        }
    }

    /// A value for people: `yes`/`no`, UUIDs with the SIG's names, `-` for none or an empty list.
    static func text(_ value: ReflectedPropertyValue?) -> String {
        switch value {
        case nil: "-"
        case .string(let s): Records.printable(s)
        case .bool(let b): Records.yesNo(b)
        case .integer(let i): String(i)
        case .uuids(let uuids): uuids.isEmpty ? "-" : uuids.map(Records.named).joined(separator: ", ")
        case .manufacturerData(let data): Records.manufacturerDataText(data)
        case .serviceData(let data): Records.serviceDataText(data)
        }
    }

    /// A value in a table's cell: as ``text(_:)``, lists without spaces or names.
    static func cell(_ value: ReflectedPropertyValue?) -> String {
        switch value {
        case .uuids(let uuids): uuids.isEmpty ? "-" : uuids.map(\.shortString).joined(separator: ",")
        case .manufacturerData(let data): Records.manufacturerDataText(data, separator: ",")
        case .serviceData(let data): Records.serviceDataText(data, separator: ",")
        default: text(value)
        }
    }

    /// `-61 dBm`, `-` for none.
    static func dBm(_ value: Int?) -> String {
        value.map { "\($0) dBm" } ?? "-"
    }

    /// `0x03c1 Keyboard`: the value and the SIG's most precise name for it (subcategory,
    /// else category); `-` for none.
    static func appearanceText(_ value: UInt16?) -> String {
        guard let value else { return "-" }
        let names = AssignedNumbers.appearanceNames(for: value)
        return Records.hex(value, digits: 4) + ((names.subcategory ?? names.category).map { " " + Records.printable($0) } ?? "")
    }

    /// The D-Bus name in snake case: `TxPower` → `tx_power`, `RSSI` → `rssi`, `UUIDs` →
    /// `uuids`, `ServicesResolved` → `services_resolved`.
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

    private static func uuidsJSON(_ uuids: [BluetoothUUID]) -> JSONValue {
        uuids.isEmpty ? .array([]) : .array(uuids.map { .string($0.shortString) })
    }
}
