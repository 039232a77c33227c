import BlueZKit

/// The value kinds blectl's options and arguments take.
extension ValueParser where Value == Duration {
    /// The largest timeout accepted, one day.
    static var maximumSeconds: Int64 { 86_400 }

    /// A duration written in seconds, decimals allowed: `5`, `2.5`, `.5`, `0`, up to
    /// `maximumSeconds` (86400, one day).
    ///
    /// Only plain decimal notation is accepted, so `NaN`, `inf`, `1e3`, `0x10`, `-1`,
    /// `+1`, `" 1"` and the empty string are all rejected. The conversion is exact
    /// (no floating point): `0.1` is 100 ms; digits past the attosecond are dropped.
    static var seconds: ValueParser<Duration> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Duration in
            let syntax = ExpectedValue("a number of seconds (decimals allowed), 0 or more")
            let tooLarge = ExpectedValue("at most \(maximumSeconds) seconds (one day)")
            let parts = text.utf8.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
            let whole = parts[0]
            let fraction = parts.count > 1 ? parts[1] : text.utf8[text.utf8.endIndex...]
            let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
            guard whole.allSatisfy(isDigit), fraction.allSatisfy(isDigit), !(whole.isEmpty && fraction.isEmpty) else {
                throw syntax
            }
            // Leading zeros are harmless; more than 5 significant digits exceed 86400.
            let significant = whole.drop { $0 == UInt8(ascii: "0") }
            guard significant.count <= 5 else { throw tooLarge }
            let seconds = significant.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
            var attoseconds = Int64(0)
            for position in 0..<18 {
                let digit = position < fraction.count
                    ? Int64(fraction[fraction.index(fraction.startIndex, offsetBy: position)] - UInt8(ascii: "0"))
                    : 0
                attoseconds = attoseconds * 10 + digit
            }
            guard seconds < maximumSeconds || (seconds == maximumSeconds && attoseconds == 0) else {
                throw tooLarge
            }
            return Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
        }, describe: { duration in
            let (seconds, attoseconds) = duration.components
            guard attoseconds != 0 else { return "\(seconds)" }
            let digits = String(attoseconds)
            let padded = String(repeating: "0", count: max(0, 18 - digits.count)) + digits
            return "\(seconds)." + padded.reversed().drop { $0 == "0" }.reversed()
        })
    }
}

extension ValueParser where Value == BluetoothAddress {
    /// A device address, six hex pairs separated by `:` in either case
    /// (see `BluetoothAddress.init?(_:)`).
    static var address: ValueParser<BluetoothAddress> {
        ValueParser(noun: "address", parse: { (text: String) throws(ExpectedValue) -> BluetoothAddress in
            guard let address = BluetoothAddress(text) else {
                throw ExpectedValue("six hex pairs like C0:FF:EE:00:00:01")
            }
            return address
        }, describe: { $0.description }, completion: .bluez(.devices))
    }
}

extension ValueParser where Value == BluetoothUUID {
    /// A 16-bit, 32-bit or 128-bit UUID (see `BluetoothUUID.init?(_:)`).
    static var uuid: ValueParser<BluetoothUUID> {
        ValueParser(noun: "UUID", parse: { (text: String) throws(ExpectedValue) -> BluetoothUUID in
            guard let uuid = BluetoothUUID(text) else {
                throw ExpectedValue(
                    "16-bit (180f, 0x180F), 32-bit (0000180f) or 128-bit (0000180f-0000-1000-8000-00805f9b34fb) form"
                )
            }
            return uuid
        }, describe: { $0.shortString })
    }
}

extension ValueParser where Value == String {
    /// An adapter name as BlueZ spells it: `hci` then decimal digits (`^hci[0-9]+$`).
    static var adapterName: ValueParser<String> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> String in
            let digits = text.utf8.dropFirst(3)
            guard text.utf8.starts(with: "hci".utf8), !digits.isEmpty,
                  digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { throw ExpectedValue("an adapter name like hci0") }
            return text
        }, describe: { $0 }, completion: .bluez(.adapters))
    }
}

extension ValueParser where Value == Int16 {
    /// A whole number of dBm within `range` (an RSSI threshold; BlueZ
    /// doc/org.bluez.Adapter.rst, SetDiscoveryFilter `RSSI`).
    static func dBm(in range: ClosedRange<Int16>) -> ValueParser<Int16> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Int16 in
            guard let value = Int16(text), range.contains(value) else {
                throw ExpectedValue("a whole number of dBm from \(range.lowerBound) to \(range.upperBound)")
            }
            return value
        }, describe: { "\($0)" })
    }
}

extension ValueParser where Value: FixedWidthInteger & Sendable {
    /// A whole number in plain decimal within `range`: digits only (no sign, no spaces, no
    /// `0x`), as `--offset 7` or `--count 3`.
    /// - Parameter unit: completes "a whole number of …" in the error, `"bytes"`; empty for none.
    static func wholeNumber(in range: ClosedRange<Value>, unit: String = "") -> ValueParser<Value> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Value in
            let expectation = ExpectedValue("a whole number\(unit.isEmpty ? "" : " of \(unit)") from \(range.lowerBound) to \(range.upperBound)")
            guard !text.isEmpty, text.utf8.count <= 20,
                  text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  let value = Value(text), range.contains(value)
            else { throw expectation }
            return value
        }, describe: { "\($0)" })
    }
}

extension ValueParser where Value == Passkey {
    /// A pairing passkey: 1 to 6 decimal digits, 0 to 999999 (`123456`, `42`, `000042`).
    static var passkey: ValueParser<Passkey> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Passkey in
            let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
            guard (1...6).contains(text.utf8.count), text.utf8.allSatisfy(isDigit), let number = UInt32(text),
                  let passkey = Passkey(number)
            else { throw ExpectedValue("a passkey of up to 6 digits, 0 to 999999") }
            return passkey
        }, describe: { $0.description })
    }
}
