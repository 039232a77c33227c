import BlueZKit

/// `manufacturer_data` as scan and info print it: each company identifier as 4 lowercase hex
/// digits to its data as lowercase hex, ordered by company (`{"05f1":"0102"}`). Written
/// straight into a scan's line, with no object made.
struct ManufacturerDataJSON: JSONFieldValue {
    let data: [UInt16: [UInt8]]

    /// The company identifiers in order.
    fileprivate var companies: [UInt16] { data.count == 1 ? Array(data.keys) : data.keys.sorted() }

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

/// `company` as scan prints it: each company identifier of the manufacturer data that the
/// SIG has assigned, as 4 lowercase hex digits (as in `manufacturer_data`), to its name;
/// ordered by identifier (`{"05f1":"The Linux Foundation"}`).
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
