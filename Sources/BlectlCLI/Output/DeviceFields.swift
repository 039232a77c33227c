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
/// (``DeviceProperties``): one field per property, in the table's order, each as
/// ``PropertyFields`` shows a value of its type. A property added to the table shows in
/// `info` and `devices` (and in `scan` when it is an advertisement's) with no change here;
/// the properties listed below are shown their own way.
enum DeviceFields {
    /// Which record: a scan's line, or `info`'s object (and `devices`' lines).
    enum Record {
        case scan
        case info
    }

    /// The fields of the properties in `table`, as `record` shows them. Device1.Adapter is
    /// left to the record (both show the adapter's name, not its path).
    /// - Parameter bthomeBindKeys: `--bindkey`'s keys, which `decoded` decrypts BTHome frames with.
    static func fields<Source: DeviceRecordSource>(_ table: PropertyTable<DeviceProperties>, for record: Record,
                                                   bthomeBindKeys: [BluetoothAddress: BTHomeBindKey] = [:]) -> [RecordField<Source>] {
        table.declarations.flatMap { declaration in fields(declaration, for: record, bthomeBindKeys: bthomeBindKeys) as [RecordField<Source>] }
    }

    private static func fields<Source: DeviceRecordSource>(_ declaration: PropertyDeclaration<DeviceProperties>, for record: Record,
                                                           bthomeBindKeys: [BluetoothAddress: BTHomeBindKey]) -> [RecordField<Source>] {
        let name = declaration.name
        let key = PropertyFields.snakeCase(name)
        switch (name, record) {
        case ("Adapter", _):
            return []
        case ("Address", _):
            return [RecordField(key, json: { $0.address.description }, text: { $0.address.description })]
        case ("AddressType", _):
            // Read directly rather than through the table's key path: every scan line has it.
            return [RecordField(key, json: { $0.properties.addressType }, text: { $0.properties.addressType.map(Records.printable) ?? "-" })]
        case ("Name", _):
            return [RecordField(key, json: { $0.name }, text: { $0.name.map(Records.printable) ?? "-" })]
        case ("RSSI", _):
            return [RecordField(key, json: { $0.properties.rssi }, text: { dBm($0.properties.rssi) })]
        case ("TxPower", _):
            return [RecordField(key, json: { $0.properties.txPower }, text: { dBm($0.properties.txPower) })]
        case ("Connected", .scan):
            return []   // ``scanConnected``, at the end of the line
        case ("Alias", .scan):
            return []   // read for --name, which matches it as well as Name; the line shows Name
        case ("Appearance", .scan):
            return [RecordField(key, json: { $0.properties.appearance.map(AppearanceJSON.init) },
                                text: { appearanceText($0.properties.appearance) })]
        case ("Appearance", .info):
            return [RecordField(key, json: { $0.properties.appearance.map(Int.init) },
                                text: { $0.properties.appearance.map { Records.hex($0, digits: 4) } ?? "-" })]
        case ("Class", _):
            return [RecordField(key, json: { $0.properties.deviceClass.map(Int.init) },
                                text: { $0.properties.deviceClass.map { Records.hex($0, digits: 6) } ?? "-" })]
        case ("UUIDs", .scan):
            return [RecordField(key, json: { UUIDListJSON(uuids: $0.properties.uuids ?? []) }, text: { s in
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
                RecordField(key, json: { ServiceDataJSON(data: $0.properties.serviceData ?? [:]) },
                            text: { Records.serviceDataText($0.properties.serviceData ?? [:], separator: ",", named: true) }),
                // The SIG's names of the UUIDs listed and of the service data's, in text beside each.
                RecordField("service_names", json: { ServiceNamesJSON(uuids: $0.properties.uuids ?? [], serviceData: $0.properties.serviceData ?? [:]) },
                            text: { _ in "" }),
                decoded(bthomeBindKeys),
            ]
        case ("ServiceData", .info):
            return [PropertyFields.field(declaration, of: { $0.properties }), decoded(bthomeBindKeys)]
        default:
            return [PropertyFields.field(declaration, of: { $0.properties })]
        }
    }

    /// Whether a scan's device is connected (false when BlueZ does not say): near the end of
    /// a scan's line, after the advertised data, where scripts have always found it.
    static func scanConnected<Source: DeviceRecordSource>() -> RecordField<Source> {
        RecordField("connected", json: { $0.properties.connected ?? false }, text: { Records.yesNo($0.properties.connected ?? false) })
    }

    /// `decoded`: the beacon formats of the manufacturer and service data (``DecodedJSON``),
    /// after the service data; encrypted BTHome frames decrypted with `bthomeBindKeys`.
    static func decoded<Source: DeviceRecordSource>(_ bthomeBindKeys: [BluetoothAddress: BTHomeBindKey]) -> RecordField<Source> {
        RecordField("decoded", json: { DecodedJSON($0.properties, bthomeBindKeys: bthomeBindKeys) },
                    text: { DecodedJSON($0.properties, bthomeBindKeys: bthomeBindKeys).text })
    }

    /// The fields a scan's text shows beside others rather than in a column of their own,
    /// and `decoded`, left to the JSON and `info`'s text (too wide for a column).
    static let scanTextOmitted: Set<String> = ["company", "service_names", "decoded"]

    // MARK: - Values shown their own way

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
}
