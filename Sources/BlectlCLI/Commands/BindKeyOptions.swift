import BlueZKit
import Synchronization

/// `--bindkey ADDRESS=KEY`, repeatable, on `scan`, `info` and `devices`: the BTHome bind keys
/// that decrypt encrypted BTHome v2 advertisements in `decoded` (bthome.io/encryption).
/// A key is never printed: not in records, errors or the trace.
struct BindKeyOptions: ParsableArguments, Equatable {
    @Option("bindkey", valueName: "address=key",
            help: "Decrypt the encrypted BTHome advertisements of the device with this address with this bind key, 32 hex digits, as in 54:48:E6:8F:80:A5=231d39c1d7cc1ab1aee224cd096db932 (never printed). Repeat for several devices.",
            parser: .bindKey)
    var entries: [Entry]

    /// One `--bindkey`: a device's address and its key.
    struct Entry: Sendable, Equatable {
        let address: BluetoothAddress
        let key: BTHomeBindKey
    }

    init() {}

    /// An address given twice with different keys is refused; the same key again (key lists
    /// merged from several sources) is taken once.
    mutating func validate() throws(UsageError) {
        var seen: [BluetoothAddress: BTHomeBindKey] = [:]
        for entry in entries {
            if let earlier = seen.updateValue(entry.key, forKey: entry.address), earlier != entry.key {
                throw UsageError("'--bindkey' gives \(entry.address) two different keys")
            }
        }
    }

    private static let reported = Atomic<Bool>(false)

    /// The keys by address (empty when none is given).
    var keys: [BluetoothAddress: BTHomeBindKey] {
        Dictionary(entries.map { ($0.address, $0.key) }, uniquingKeysWith: { first, _ in first })
    }

    /// Says on stderr, when keys are given, that libcrypto is missing and encrypted frames
    /// stay undecodable (each record's `decoded` says so too): once per process, however
    /// many devices `info` is given.
    func reportUnavailableDecryption(_ printer: Printer) {
        guard !entries.isEmpty, let why = BTHome.decryptionUnavailable,
              !Self.reported.exchange(true, ordering: .relaxed) else { return }
        let text = "--bindkey: cannot decrypt BTHome advertisements, libcrypto (libssl3) is not available: \(why)"
        printer.diagnostic(.object([("event", .string("bindkey")), ("message", .string(text))]), text: text)
    }
}

extension ValueParser where Value == BindKeyOptions.Entry {
    /// `ADDRESS=KEY`: a device address and 32 hex digits; an error never repeats the value.
    static var bindKey: ValueParser<BindKeyOptions.Entry> {
        ValueParser(noun: "bind key", parse: { (text: String) throws(ExpectedValue) -> BindKeyOptions.Entry in
            guard let equals = text.firstIndex(of: "=") else {
                throw ExpectedValue("ADDRESS=KEY, a device address, '=' and its bind key of 32 hex digits")
            }
            guard let address = BluetoothAddress(String(text[..<equals])) else {
                throw ExpectedValue("an address of six hex pairs like C0:FF:EE:00:00:01 before '='")
            }
            let hex = String(text[text.index(after: equals)...])
            guard let key = BTHomeBindKey(hex: hex) else {
                throw ExpectedValue("a bind key of 32 hex digits (16 bytes) after '=', not \(hex.count) characters"
                                    + (hex.count == 32 ? " with other than hex digits" : ""))
            }
            return BindKeyOptions.Entry(address: address, key: key)
        }, describe: { "\($0.address)=<key>" }, isSecret: true)
    }
}
