extension ValueParser where Value == [UInt8] {
    /// Bytes in hex: `0102ff`, `01:02:ff` (or `-`/space separated pairs) and `0x0102ff`, any
    /// case; at least one byte, at most 512 (the longest attribute value, Core Vol 3 Part F
    /// 3.2.9).
    static var hexBytes: ValueParser<[UInt8]> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> [UInt8] in
            let expectation = ExpectedValue("hex bytes like 0102ff, 01:02:ff or 0x0102ff (1 to 512 bytes)")
            var digits = Substring(text)
            if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
            let separated = digits.contains(":") || digits.contains("-") || digits.contains(" ")
            var bytes = [UInt8]()
            if separated {
                for pair in digits.split(separator: digits.contains(":") ? ":" : digits.contains("-") ? "-" : " ", omittingEmptySubsequences: false) {
                    let digits = Array(pair.utf8)
                    guard digits.count == 2, let high = hexDigit(digits[0]), let low = hexDigit(digits[1]) else { throw expectation }
                    bytes.append(high << 4 | low)
                }
            } else {
                guard let plain = [UInt8](hexDigits: digits) else { throw expectation }
                bytes = plain
            }
            guard (1...512).contains(bytes.count) else { throw expectation }
            return bytes
        }, describe: { $0.hexString })
    }
}

extension ValueParser where Value == [UInt8] {
    /// Text taken as its UTF-8 bytes: at least one byte, at most 512 (as ``hexBytes``).
    static var utf8Text: ValueParser<[UInt8]> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> [UInt8] in
            let bytes = Array(text.utf8)
            guard (1...512).contains(bytes.count) else { throw ExpectedValue("text of 1 to 512 bytes in UTF-8") }
            return bytes
        }, describe: { String(decoding: $0, as: UTF8.self) })
    }
}

extension [UInt8] {
    /// The bytes of hex digits, two per byte, any case, nothing else (`0a1B`; empty: none);
    /// nil for anything else.
    init?(hexDigits text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard utf8.count.isMultiple(of: 2) else { return nil }
        self = []
        reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = hexDigit(utf8[index]), let low = hexDigit(utf8[index + 1]) else { return nil }
            append(high << 4 | low)
            index += 2
        }
    }
}

private func hexDigit(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
}
