import BlueZKit

/// The values of `advertise`'s options: what goes into the advertisement's fields.
extension ValueParser where Value == LEAdvertisement.ManufacturerData {
    /// `ID:HEX`: a company identifier in hex, 1 to 4 digits with or without `0x` (`004c`,
    /// `0x4C`: as `scan` prints them), a colon, then the data as ``hexBytes`` takes it.
    static var manufacturerData: ValueParser<LEAdvertisement.ManufacturerData> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> LEAdvertisement.ManufacturerData in
            let expectation = ExpectedValue("a company identifier in hex, a colon and hex bytes, like 004c:0215 or 0xffff:01:02")
            guard let colon = text.firstIndex(of: ":") else { throw expectation }
            var id = Substring(text[..<colon])
            if id.hasPrefix("0x") || id.hasPrefix("0X") { id = id.dropFirst(2) }
            guard (1...4).contains(id.utf8.count), id.allSatisfy(\.isHexDigit), let company = UInt16(id, radix: 16),
                  let data = try? ValueParser<[UInt8]>.hexBytes.parse(String(text[text.index(after: colon)...]))
            else { throw expectation }
            return LEAdvertisement.ManufacturerData(company: company, data: data)
        }, describe: { Records.hex4($0.company) + ":" + $0.data.hexString })
    }
}

extension ValueParser where Value == LEAdvertisement.ServiceData {
    /// `UUID:HEX`: a service UUID as ``uuid`` takes it, a colon, then the data as
    /// ``hexBytes`` takes it (UUIDs hold no colon: the first one ends it).
    static var serviceData: ValueParser<LEAdvertisement.ServiceData> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> LEAdvertisement.ServiceData in
            let expectation = ExpectedValue("a service UUID, a colon and hex bytes, like 180f:64 or fe95:0102")
            guard let colon = text.firstIndex(of: ":"), let uuid = BluetoothUUID(String(text[..<colon])),
                  let data = try? ValueParser<[UInt8]>.hexBytes.parse(String(text[text.index(after: colon)...]))
            else { throw expectation }
            return LEAdvertisement.ServiceData(uuid: uuid, data: data)
        }, describe: { $0.uuid.shortString + ":" + $0.data.hexString })
    }
}

extension ValueParser where Value == UInt16 {
    /// A 16-bit number in decimal (`961`) or in hex after `0x` (`0x03c1`), as GAP Appearance
    /// values are written.
    static var decimalOrHex16: ValueParser<UInt16> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> UInt16 in
            let expectation = ExpectedValue("a number from 0 to 65535, in decimal or in hex after 0x (0x03c1)")
            let hex = text.hasPrefix("0x") || text.hasPrefix("0X")
            let digits = hex ? text.dropFirst(2) : Substring(text)
            guard !digits.isEmpty, digits.utf8.count <= 5,
                  digits.allSatisfy({ hex ? $0.isHexDigit : ("0"..."9").contains($0) }),
                  let value = UInt16(digits, radix: hex ? 16 : 10)
            else { throw expectation }
            return value
        }, describe: { "\($0)" })
    }
}
