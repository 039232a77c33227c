/// A type whose stored properties are its command-line arguments and options, each declared
/// once with `@Argument`, `@Option`, `@Flag` or `@OptionGroup` (swift-argument-parser's
/// protocol of the same name): the declarations come from initializing a blank instance, in
/// the order the properties are written, and a parse fills the same properties in.
protocol ParsableArguments: Sendable {
    /// A blank instance: every property at its default, a required one without a value.
    init()

    /// Checks what the declarations cannot say alone (options that exclude each other, a value
    /// whose kind another option decides), after every value is read; may keep what it works
    /// out. Does nothing by default.
    /// - Throws: `UsageError` naming the options concerned.
    mutating func validate() throws(UsageError)
}

extension ParsableArguments {
    mutating func validate() throws(UsageError) {}

    /// The arguments and options declared, in order.
    static var declarations: ArgumentScope.Declarations {
        ArgumentScope.declarations { Self() }
    }

    /// An instance with the values of a matched command line, validated.
    /// - Throws: `UsageError` for the first value that does not convert (in declaration
    ///   order), else the one `validate()` throws; about `values.subcommand`.
    static func parse(_ values: ParsedValues) throws(UsageError) -> Self {
        do throws(UsageError) {
            var parsed = try ArgumentScope.reading(values) { Self() }
            try parsed.validate()
            return parsed
        } catch {
            throw error.concerning(values.subcommand)
        }
    }
}
