import DBusKit

/// What the property wrappers of a command's type (`@Option`, `@Flag`, `@Argument`,
/// `@OptionGroup`) report to while the type is initialized for a parse: each one, as it is
/// initialized, declares itself here, in the order the properties are written, and, when a
/// command line is being read, takes its value from here.
///
/// swift-argument-parser finds the declarations with a `Mirror` over a blank instance and
/// fills the values in with a `Decoder`; a `Mirror` instantiates the standard library's own
/// generic types by mangled name at start-up, a cost BENCHMARKS.md measures ("Mechanisms
/// kept for speed"). Initializing the type inside a scope finds the same declarations, in the same
/// order, without reflection: ``ParsableArguments/declarations`` and
/// ``ParsableArguments/parse(_:)`` are the only places that make one.
final class ArgumentScope: Sendable {
    /// The scope the type being initialized reports to; nil outside a parse (a command made
    /// in code keeps the values it is given, or its defaults).
    @TaskLocal static var current: ArgumentScope?

    /// What a type declares: its arguments and options in order, and the options that must
    /// be given all together or not at all (an optional `@OptionGroup`).
    struct Declarations: Sendable {
        var arguments: [ArgumentSpec] = []
        var options: [OptionSpec] = []
        var allOrNoneGroups: [[String]] = []
    }

    /// The command line's values when reading one; nil when only declaring.
    private let values: ParsedValues?
    private let state = Lock(State())

    private struct State {
        var declared = Declarations()
        var firstError: UsageError?
    }

    private init(values: ParsedValues?) {
        self.values = values
    }

    /// What `make` declares as it initializes a type, without reading any value.
    static func declarations(of make: () -> some Any) -> Declarations {
        let scope = ArgumentScope(values: nil)
        _ = $current.withValue(scope, operation: make)
        return scope.state.withLock { $0.declared }
    }

    /// The value `make` returns, its properties read from `values`.
    /// - Throws: the first value that does not convert, in declaration order (`UsageError`).
    static func reading<T>(_ values: ParsedValues, _ make: () -> T) throws(UsageError) -> T {
        let scope = ArgumentScope(values: values)
        let made = $current.withValue(scope, operation: make)
        if let error = scope.state.withLock({ $0.firstError }) { throw error }
        return made
    }

    // MARK: - What the property wrappers call
    //
    // Each takes the declaration and the spec it makes, the spec built only when declaring:
    // a parse reads by name, and building every spec again (defaults described, choices
    // listed) would be wasted there.

    /// Declares an option that takes one value; returns that value converted when the
    /// command line gives it, nil when it does not or the value does not convert (the error
    /// is kept for ``reading(_:_:)``).
    func value<Value>(of option: OptionDeclaration<Value>, spec: @autoclosure () -> OptionSpec) -> Value? {
        guard let values else { return declare(spec()) }
        return keepingError { () throws(UsageError) in try values.value(ofOption: option.long, parser: option.parser) } ?? nil
    }

    /// Declares a repeatable option; returns every value given, converted, in order.
    func values<Value>(of option: OptionDeclaration<Value>, spec: @autoclosure () -> OptionSpec) -> [Value] {
        guard let values else { return declare(spec()) ?? [] }
        return keepingError { () throws(UsageError) in try values.values(ofOption: option.long, parser: option.parser) } ?? []
    }

    /// Declares a flag; returns how many times it was given.
    func count(of flag: FlagDeclaration, spec: @autoclosure () -> OptionSpec) -> Int {
        guard let values else { return declare(spec()) ?? 0 }
        return values.count(ofFlag: flag.long)
    }

    /// Declares a positional argument; returns its value converted, nil when it is absent
    /// (an optional argument) or does not convert.
    func value<Value>(of argument: ArgumentDeclaration<Value>, spec: @autoclosure () -> ArgumentSpec) -> Value? {
        guard let values else {
            state.withLock { $0.declared.arguments.append(spec()) }
            return nil
        }
        return keepingError { () throws(UsageError) in try values.value(ofArgument: argument.valueName, parser: argument.parser) } ?? nil
    }

    /// Declares a repeating positional argument; returns its words converted, in order.
    func values<Value>(of argument: ArgumentDeclaration<Value>, spec: @autoclosure () -> ArgumentSpec) -> [Value] {
        guard let values else {
            state.withLock { $0.declared.arguments.append(spec()) }
            return []
        }
        return keepingError { () throws(UsageError) in try values.values(ofArgument: argument.valueName, parser: argument.parser) } ?? []
    }

    /// Declares the options `make` declares as a group to give all together or not at all,
    /// none of them required on its own; when reading, returns what `make` makes if the
    /// command line gives any of them, else nil.
    func allOrNone<Group>(_ make: () -> Group) -> Group? {
        let options = Self.declarations(of: make).options
        guard let values else {
            state.withLock { state in
                state.declared.options += options.map { option in
                    var optional = option
                    optional.isRequired = false
                    return optional
                }
                state.declared.allOrNoneGroups.append(options.map(\.long))
            }
            return nil
        }
        return options.contains { values.contains($0.long) } ? make() : nil
    }

    /// Runs a group's `validate()`, keeping its error.
    func validate(_ check: () throws(UsageError) -> Void) {
        guard values != nil else { return }
        keepingError(check)
    }

    /// Adds `option` to the declarations; nil, for the value of an option only declared.
    private func declare<T>(_ option: OptionSpec) -> T? {
        state.withLock { $0.declared.options.append(option) }
        return nil
    }

    @discardableResult
    private func keepingError<T>(_ body: () throws(UsageError) -> T) -> T? {
        do {
            return try body()
        } catch {
            state.withLock { state in
                if state.firstError == nil { state.firstError = error }
            }
            return nil
        }
    }
}
