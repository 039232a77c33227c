/// A positional argument, `<address>`, declared once where its value is kept:
///
///     @Argument("characteristic", help: "The characteristic's UUID: …", parser: .uuid)
///     var characteristic: BluetoothUUID
///
/// Arguments take the command line's positional words in the order they are declared. A
/// `T` argument must be given; a `T?` one may be left out (and is nil then).
@propertyWrapper
struct Argument<Value: Sendable>: Sendable {
    /// nil only for a required argument not parsed or set.
    private var value: Value?

    var wrappedValue: Value {
        get {
            guard let value else { preconditionFailure("an @Argument was read before it was parsed or set") }
            return value
        }
        set { value = newValue }
    }

    /// `T`: required.
    init(_ declaration: ArgumentDeclaration<Value>) {
        value = ArgumentScope.current?.value(of: declaration, spec: declaration.spec(optional: false))
    }

    /// `T?`: may be left out.
    init<Parsed>(_ declaration: ArgumentDeclaration<Parsed>) where Value == Parsed? {
        value = .some(ArgumentScope.current?.value(of: declaration, spec: declaration.spec(optional: true)))
    }

    /// `[T]`: one or more words (`<address> ...`), in order; none when the option
    /// `replacedBy` names is given (`from`: `--from` gives them instead), `[]` then.
    init<Element>(_ declaration: ArgumentDeclaration<Element>, replacedBy option: String? = nil) where Value == [Element] {
        var spec = declaration.spec(optional: false)
        spec.isRepeating = true
        spec.replacedBy = option
        value = ArgumentScope.current?.values(of: declaration, spec: spec) ?? []
    }
}

extension Argument {
    /// - Parameters:
    ///   - valueName: the name without brackets, `"address"`, shown as `<address>`.
    ///   - help: one or more sentences.
    ///   - parser: converts and validates the value.
    init(_ valueName: String, help: String, parser: ValueParser<Value>) {
        self.init(ArgumentDeclaration(valueName, help: help, parser: parser))
    }

    init<Parsed>(_ valueName: String, help: String, parser: ValueParser<Parsed>) where Value == Parsed? {
        self.init(ArgumentDeclaration(valueName, help: help, parser: parser))
    }
}

extension Argument: Equatable where Value: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.value == rhs.value }
}

/// An argument as several commands declare it alike, `@Argument(.device)`.
struct ArgumentDeclaration<Parsed: Sendable>: Sendable {
    var valueName: String
    var help: String
    var parser: ValueParser<Parsed>

    /// The parameters as ``Argument``'s.
    init(_ valueName: String, help: String, parser: ValueParser<Parsed>) {
        self.valueName = valueName
        self.help = help
        self.parser = parser
    }

    func spec(optional: Bool) -> ArgumentSpec {
        ArgumentSpec(valueName: valueName, help: help, isOptional: optional, completion: parser.completion)
    }
}
