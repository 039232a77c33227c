import BlueZKit

// The JSON values of what a device advertises (Device1's UUIDs, Appearance,
// ManufacturerData, ServiceData) and the SIG's names for them, as scan and info print them.
// Each writes its bytes straight into a line, the same bytes as its `jsonValue` serialized;
// an empty list or map is written with no JSONValue made (most advertisements carry none).

/// `uuids`: each UUID by its short form (`["180f","5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"]`),
/// in Device1.UUIDs' order.
struct UUIDListJSON: JSONFieldValue {
    let uuids: [BluetoothUUID]

    var jsonValue: JSONValue { .array(uuids.map { .string($0.shortString) }) }

    func write(to lines: inout JSONLines) {
        lines.bytes.append(UInt8(ascii: "["))
        for (i, uuid) in uuids.enumerated() {
            if i > 0 { lines.bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(uuid.shortString, into: &lines.bytes)
        }
        lines.bytes.append(UInt8(ascii: "]"))
    }
}

/// `appearance` in scan: `{"value":961,"category":"Human Interface Device","subcategory":"Keyboard"}`,
/// the Device1.Appearance value and the SIG's names for its category and subcategory (null
/// where the SIG assigns none; Assigned Numbers, section 2.6).
struct AppearanceJSON: JSONFieldValue {
    let value: UInt16

    var jsonValue: JSONValue {
        let names = AssignedNumbers.appearanceNames(for: value)
        return .object([("value", .int(Int(value))), ("category", .optional(names.category)),
                        ("subcategory", .optional(names.subcategory))])
    }

    func write(to lines: inout JSONLines) { jsonValue.write(into: &lines.bytes) }
}

/// `manufacturer_data`: each company identifier as 4 lowercase hex digits to its data as
/// lowercase hex, ordered by company (`{"05f1":"0102"}`).
struct ManufacturerDataJSON: JSONFieldValue {
    let data: [UInt16: [UInt8]]

    /// The company identifiers in order.
    fileprivate var companies: [UInt16] { data.keys.sorted() }

    var jsonValue: JSONValue {
        .object(companies.map { (Records.hex4($0), .string(data[$0]!.hexString)) })
    }

    func write(to lines: inout JSONLines) {
        lines.bytes.append(UInt8(ascii: "{"))
        for (i, company) in companies.enumerated() {
            if i > 0 { lines.bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeHex4(company, into: &lines.bytes)
            lines.bytes.append(UInt8(ascii: ":"))
            JSONValue.writeHex(data[company]!, into: &lines.bytes)
        }
        lines.bytes.append(UInt8(ascii: "}"))
    }
}

/// `company` in scan: each company identifier of the manufacturer data that the SIG has
/// assigned, as 4 lowercase hex digits (as in `manufacturer_data`), to its name; ordered by
/// identifier (`{"05f1":"The Linux Foundation"}`).
struct CompanyNamesJSON: JSONFieldValue {
    let data: [UInt16: [UInt8]]

    var jsonValue: JSONValue {
        .object(ManufacturerDataJSON(data: data).companies.compactMap { id in
            AssignedNumbers.companyName(for: id).map { (Records.hex4(id), .string($0)) }
        })
    }

    func write(to lines: inout JSONLines) {
        lines.bytes.append(UInt8(ascii: "{"))
        var first = true
        for company in ManufacturerDataJSON(data: data).companies {
            guard let name = AssignedNumbers.companyName(for: company) else { continue }
            if !first { lines.bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONValue.writeHex4(company, into: &lines.bytes)
            lines.bytes.append(UInt8(ascii: ":"))
            JSONValue.writeString(name, into: &lines.bytes)
        }
        lines.bytes.append(UInt8(ascii: "}"))
    }
}

/// `service_data`: each service UUID by its short form to the data as lowercase hex,
/// ordered by UUID (`{"feed":"020031"}`).
struct ServiceDataJSON: JSONFieldValue {
    let data: [BluetoothUUID: [UInt8]]

    var jsonValue: JSONValue {
        .object(data.sorted { $0.key.description < $1.key.description }.map { ($0.key.shortString, .string($0.value.hexString)) })
    }

    func write(to lines: inout JSONLines) {
        if data.isEmpty { JSONValue.writeLiteral("{}", into: &lines.bytes) } else { jsonValue.write(into: &lines.bytes) }
    }
}

/// `service_names` in scan: each UUID (short form) of the UUIDs and service data that the
/// SIG has named, to its name; each once, ordered by UUID (`{"180f":"Battery"}`).
struct ServiceNamesJSON: JSONFieldValue {
    let uuids: [BluetoothUUID]
    let serviceData: [BluetoothUUID: [UInt8]]

    var jsonValue: JSONValue {
        let sorted = (uuids + serviceData.keys).sorted { $0.description < $1.description }
        var previous: BluetoothUUID?
        let named = sorted.compactMap { uuid -> (String, JSONValue)? in
            defer { previous = uuid }
            guard uuid != previous else { return nil }   // listed and with service data: once
            return AssignedNumbers.name(for: uuid).map { (uuid.shortString, .string($0)) }
        }
        return .object(named)
    }

    func write(to lines: inout JSONLines) {
        if uuids.isEmpty && serviceData.isEmpty { JSONValue.writeLiteral("{}", into: &lines.bytes) } else { jsonValue.write(into: &lines.bytes) }
    }
}
