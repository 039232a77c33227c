import BlueZKit

/// blectl's one grammar for numbers, shared by every numeric option (`--timeout`,
/// `--rssi-min`, `--offset`, `--count`): plain decimal digits, leading zeros allowed;
/// a fraction (`2.5`, `.5`, `5.`) only where decimals are allowed (seconds); a leading `-`
/// only where negative values are (dBm), and only before a number that is not zero (`-0`
/// is refused everywhere); never `+`, spaces, exponents, `0x`, `_`, `NaN` or `inf` (`inf`
/// is a word of its own, for the commands that listen). Documented in man/blectl.1, OPTIONS.
struct NumberText {
    var negative: Bool
    /// The digits before the point (maybe empty, as in `.5`).
    var whole: Substring.UTF8View
    /// The digits after the point (empty without one).
    var fraction: Substring.UTF8View

    /// Reads `text` in the grammar, or nil when it is not a number of that kind.
    /// - Parameters:
    ///   - decimals: whether a fraction is allowed.
    ///   - signed: whether a leading `-` is allowed.
    init?(_ text: String, decimals: Bool, signed: Bool) {
        var rest = Substring(text)
        negative = rest.utf8.first == UInt8(ascii: "-")
        if negative {
            guard signed else { return nil }
            rest = rest.dropFirst()
        }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 1 || decimals else { return nil }
        whole = parts[0].utf8
        fraction = parts.count > 1 ? parts[1].utf8 : rest[rest.endIndex...].utf8
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard whole.allSatisfy(isDigit), fraction.allSatisfy(isDigit), !(whole.isEmpty && fraction.isEmpty) else { return nil }
        // A sign only for a number that is not zero: `-0` and `-0.0` are refused.
        if negative && (whole.allSatisfy { $0 == UInt8(ascii: "0") } && fraction.allSatisfy { $0 == UInt8(ascii: "0") }) {
            return nil
        }
    }

    /// The whole part's value when it has at most `maxDigits` significant digits, else nil.
    func wholeValue(maxDigits: Int) -> Int64? {
        let significant = whole.drop { $0 == UInt8(ascii: "0") }
        guard significant.count <= maxDigits else { return nil }
        return significant.reduce(Int64(0)) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
    }
}

/// The value kinds blectl's options and arguments take.
extension ValueParser where Value == Duration {
    /// The largest timeout accepted, one day.
    static var maximumSeconds: Int64 { 86_400 }

    /// A duration written in seconds in the number grammar (``NumberText``), decimals
    /// allowed: `5`, `2.5`, `.5`, `0`, up to `maximumSeconds` (86400, one day).
    ///
    /// `NaN`, `inf`, `1e3`, `0x10`, `-1`, `-0`, `+1`, `" 1"` and the empty string are all
    /// rejected. The conversion is exact (no floating point): `0.1` is 100 ms; digits past
    /// the attosecond are dropped.
    /// - Parameter allowingZero: false for the commands that need a connection, for which
    ///   a zero limit can only fail (64 before anything is sent).
    static func seconds(allowingZero: Bool = true) -> ValueParser<Duration> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Duration in
            let syntax = ExpectedValue(allowingZero ? "a number of seconds (decimals allowed), 0 or more"
                                                    : "a number of seconds (decimals allowed), more than 0")
            let tooLarge = ExpectedValue("at most \(maximumSeconds) seconds (one day)")
            guard let number = NumberText(text, decimals: true, signed: false) else { throw syntax }
            // Leading zeros are harmless; more than 5 significant digits exceed 86400.
            guard let seconds = number.wholeValue(maxDigits: 5) else { throw tooLarge }
            let fraction = number.fraction
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
            guard allowingZero || seconds > 0 || attoseconds > 0 else { throw syntax }
            return Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
        }, describe: { duration in
            let (seconds, attoseconds) = duration.components
            guard attoseconds != 0 else { return "\(seconds)" }
            let digits = String(attoseconds)
            let padded = String(repeating: "0", count: max(0, 18 - digits.count)) + digits
            return "\(seconds)." + padded.reversed().drop { $0 == "0" }.reversed()
        })
    }

    /// ``seconds(allowingZero:)`` allowing 0.
    static var seconds: ValueParser<Duration> { seconds() }
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
    /// A whole number of dBm within `range`, in the number grammar (``NumberText``: a `-`
    /// for a negative number, no `+`, no `-0`, no fraction); an RSSI threshold (BlueZ
    /// doc/org.bluez.Adapter.rst, SetDiscoveryFilter `RSSI`).
    static func dBm(in range: ClosedRange<Int16>) -> ValueParser<Int16> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Int16 in
            let expectation = ExpectedValue("a whole number of dBm from \(range.lowerBound) to \(range.upperBound)")
            guard let number = NumberText(text, decimals: false, signed: range.lowerBound < 0),
                  let magnitude = number.wholeValue(maxDigits: 5) else { throw expectation }
            let value = number.negative ? -magnitude : magnitude
            guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else { throw expectation }
            return Int16(value)
        }, describe: { "\($0)" })
    }
}

extension ValueParser where Value: FixedWidthInteger & Sendable {
    /// A whole number within `range` in the number grammar (``NumberText``: digits only,
    /// no sign, no fraction), as `--offset 7` or `--count 3`.
    /// - Parameter unit: completes "a whole number of …" in the error, `"bytes"`; empty for none.
    static func wholeNumber(in range: ClosedRange<Value>, unit: String = "") -> ValueParser<Value> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Value in
            let expectation = ExpectedValue("a whole number\(unit.isEmpty ? "" : " of \(unit)") from \(range.lowerBound) to \(range.upperBound)")
            guard let number = NumberText(text, decimals: false, signed: false),
                  let magnitude = number.wholeValue(maxDigits: 18),
                  let value = Value(exactly: magnitude), range.contains(value)
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
