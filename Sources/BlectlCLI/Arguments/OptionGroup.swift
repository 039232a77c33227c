/// Arguments and options declared together in a type of their own and used by several
/// commands, `@OptionGroup var target: GATTTarget`: they take their place among the
/// command's own, in the order the properties are written.
///
/// An optional group, `@OptionGroup var vendor: VendorOptions?`, is given whole or not at
/// all: its options, each required within the group, are none of them required on the
/// command, the parser refuses some without the others ("give all of …, or none"), the usage
/// line shows them in one pair of brackets, and the property is nil when none is given.
@propertyWrapper
struct OptionGroup<Value: Sendable>: Sendable {
    var wrappedValue: Value

    init() where Value: ParsableArguments {
        wrappedValue = Value.inGroup()
    }

    init<Group: ParsableArguments>() where Value == Group? {
        wrappedValue = ArgumentScope.current?.allOrNone(Group.inGroup)
    }
}

private extension ParsableArguments {
    /// A group made inside its command's scope: declared, read, then validated (an error kept
    /// with the command's, in declaration order).
    static func inGroup() -> Self {
        var group = Self()
        ArgumentScope.current?.validate { () throws(UsageError) in try group.validate() }
        return group
    }
}

extension OptionGroup: Equatable where Value: Equatable {}
