/// What a shell may offer for an option's value or a positional argument. Carried by the
/// value's `ValueParser`, so the completion scripts (`blectl completions`) follow from the
/// same declarations as the parser and the help.
enum ValueCompletion: Sendable, Equatable {
    /// Free text: nothing to offer.
    case none
    /// One of these words, exactly (`--format`: `json`, `text`).
    case choices([String])
    /// A path in the file system (`--file`).
    case files
    /// Something BlueZ knows, asked at completion time (``CompletionValues``).
    case bluez(CompletionValueKind)
}
