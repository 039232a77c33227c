/// Turns one command-line string into a typed value, or says what was expected.
///
/// Errors read `Invalid <noun> '<input>'[ for '--option']: expected <expectation>`,
/// e.g. `Invalid value 'xyz' for '--timeout': expected a number of seconds …`.
struct ValueParser<Value: Sendable>: Sendable {
    /// The noun in error messages: `"value"`, `"address"`, `"UUID"`.
    var noun: String
    /// Converts the raw string; throws what was expected instead.
    var parse: @Sendable (String) throws(ExpectedValue) -> Value
    /// Renders a value the way a user would type it, for `(default: …)` in help.
    var describe: @Sendable (Value) -> String
    /// What a shell may offer for this value.
    var completion: ValueCompletion = .none
    /// A secret (a key): an error about the value does not repeat it.
    var isSecret = false
}

/// Why a value was rejected, completing the sentence "expected …",
/// e.g. `"six hex pairs like C0:FF:EE:00:00:01"`.
struct ExpectedValue: Error, Sendable, Equatable {
    var text: String
    init(_ text: String) { self.text = text }
}

extension ValueParser where Value == String {
    /// Any string except the empty one.
    ///
    /// - Parameter expectation: completes "expected …" for the empty string.
    static func nonEmpty(expecting expectation: String) -> ValueParser<String> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> String in
            guard !text.isEmpty else { throw ExpectedValue(expectation) }
            return text
        }, describe: { $0 })
    }

    /// Every string, the empty one included; for arguments validated later.
    static let verbatim = ValueParser(noun: "value", parse: { $0 }, describe: { $0 })
}

extension ValueParser where Value: CaseIterable & RawRepresentable<String> {
    /// One of the raw values of `Value`, exactly (case-sensitive).
    static var choice: ValueParser<Value> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> Value in
            guard let value = Value(rawValue: text) else { throw ExpectedValue(Value.choicesList) }
            return value
        }, describe: { $0.rawValue }, completion: .choices(Value.allCases.map(\.rawValue)))
    }
}

extension CaseIterable where Self: RawRepresentable<String> {
    /// `"json or text"`.
    static var choicesList: String {
        allCases.map(\.rawValue).joinedAsList(conjunction: "or")
    }
}
