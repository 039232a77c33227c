/// One field of a record blectl prints, declared once: its JSON key and value, and its text
/// for people. The JSON object, the JSON line and the text forms of a record are all made
/// from its list of fields (``RecordLayout``), so they cannot drift apart.
struct RecordField<Source>: Sendable {
    /// The JSON key, in snake case (`"tx_power"`); the label in `key: value` text too.
    let key: String
    /// The JSON value (`null` for none).
    let json: @Sendable (Source) -> JSONValue
    /// Appends the JSON value to a line, as ``json`` serializes it.
    let write: @Sendable (Source, inout JSONLines) -> Void
    /// The JSON value when it is the same for every record of a layout (the adapter a scan
    /// listens on): serialized once, with the key, rather than per line.
    let constant: JSONValue?
    /// The value for people, in `key: value` lines: `-` for none, control characters shown as `?`.
    let text: @Sendable (Source) -> String
    /// The value in a table's cell or a text column, where it may be shorter than ``text``
    /// (`180f,180a` where the text names the services); ``text`` unless given.
    let cell: @Sendable (Source) -> String

    /// - Parameters:
    ///   - json: the value: a String, Int or Bool (optional or not), an ``RFC3339Time``,
    ///     ``HexBytes``, or any ``JSONValue``.
    init<Value: JSONFieldValue>(_ key: String, json value: @escaping @Sendable (Source) -> Value,
                                text: @escaping @Sendable (Source) -> String, cell: (@Sendable (Source) -> String)? = nil) {
        self.key = key
        json = { value($0).jsonValue }
        write = { value($0).write(to: &$1) }
        constant = nil
        self.text = text
        self.cell = cell ?? text
    }

    /// A field with the same value in every record (the device of a notification stream).
    init(_ key: String, constant value: some JSONFieldValue, text: String) {
        let json = value.jsonValue
        self.key = key
        self.json = { _ in json }
        write = { _, lines in json.write(into: &lines.bytes) }
        constant = json
        self.text = { _ in text }
        cell = { _ in text }
    }

    /// A field whose value is built as a ``JSONValue`` (`.string(...)`, `.object(...)`).
    init(_ key: String, json value: @escaping @Sendable (Source) -> JSONValue,
         text: @escaping @Sendable (Source) -> String, cell: (@Sendable (Source) -> String)? = nil) {
        self.key = key
        json = value
        write = { value($0).write(into: &$1.bytes) }
        constant = nil
        self.text = text
        self.cell = cell ?? text
    }
}

/// A record's fields, in order: its JSON object, its JSON line and its text forms, each made
/// from the same declarations.
struct RecordLayout<Source>: Sendable {
    let fields: [RecordField<Source>]
    /// Writes the record's JSON line: `{"address":`, the address, `,"name":`, the name and
    /// so on, with the members of constant fields written out once, into the bytes between.
    private let writeLine: @Sendable (Source, inout JSONLines) -> Void

    init(_ fields: [RecordField<Source>]) {
        self.fields = fields
        // Each step writes the bytes before a field that is not constant, then its value,
        // after the steps before it; the last step writes what follows, up to the newline.
        var writeLine: @Sendable (Source, inout JSONLines) -> Void = { _, _ in }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (i, field) in fields.enumerated() {
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONValue.writeString(field.key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if let constant = field.constant {
                constant.write(into: &bytes)
            } else {
                let before = writeLine, opening = bytes, write = field.write
                writeLine = { source, lines in
                    before(source, &lines)
                    lines.bytes += opening
                    write(source, &lines)
                }
                bytes = []
            }
        }
        let before = writeLine, closing = bytes + Array("}\n".utf8)
        self.writeLine = { source, lines in
            before(source, &lines)
            lines.bytes += closing
        }
    }

    /// The field with JSON key `key`, if the record has one.
    subscript(key: String) -> RecordField<Source>? { fields.first { $0.key == key } }

    /// The record as a JSON object.
    func object(_ source: Source) -> JSONValue {
        .object(fields.map { ($0.key, $0.json(source)) })
    }

    /// Appends the record's JSON line to `lines`: ``object(_:)``'s serialization, byte for
    /// byte, and a newline, with no object built (a scan with `--updates` and a notification
    /// stream write thousands of lines a second).
    func appendLine(_ source: Source, to lines: inout JSONLines) {
        writeLine(source, &lines)
    }

    /// The record's JSON line, with its newline (``appendLine(_:to:)``'s bytes).
    func line(_ source: Source) -> String {
        var lines = JSONLines()
        appendLine(source, to: &lines)
        return String(decoding: lines.bytes, as: UTF8.self)
    }

    /// `key: value` lines, one per field, keys as in JSON, values aligned.
    func keyValueLines(_ source: Source) -> [String] {
        Records.keyValueLines(fields.map { ($0.key, $0.text(source)) })
    }
}

/// The columns of a record's text table: a header over each field's cell, in an order of
/// their own. Fields the table does not place are shown too, each under its key in upper
/// case, at the place the table leaves for them; only the fields it names as `omitted` are
/// not (shown in a column of their own, such as `devices`' FLAGS).
struct TextColumns<Source>: Sendable {
    struct Column: Sendable {
        let header: String
        /// The column's width when rows are printed as they come (`scan`); 0 for the last.
        let width: Int
        let cell: @Sendable (Source) -> String
    }

    let columns: [Column]

    /// - Parameters:
    ///   - layout: the record.
    ///   - placed: (header, the field's key or a column of its own, width), in order.
    ///   - othersBefore: the header before which fields not placed go; at the end when nil.
    ///   - omitted: keys of fields not shown in a column of their own.
    init(_ layout: RecordLayout<Source>, _ placed: [(header: String, content: Content, width: Int)],
         othersBefore: String? = nil, omitted: Set<String> = []) {
        var columns = placed.map { header, content, width in
            switch content {
            case .field(let key):
                guard let field = layout[key] else { preconditionFailure("no field \(key) in the record") }
                return Column(header: header, width: width, cell: field.cell)
            case .custom(let cell):
                return Column(header: header, width: width, cell: cell)
            }
        }
        let placedKeys = Set(placed.compactMap { if case .field(let key) = $0.content { key } else { nil } })
        let others = layout.fields.filter { !placedKeys.contains($0.key) && !omitted.contains($0.key) }.map { field in
            Column(header: field.key.uppercased(), width: field.key.count, cell: field.cell)
        }
        let at = othersBefore.flatMap { header in columns.firstIndex { $0.header == header } } ?? columns.endIndex
        columns.insert(contentsOf: others, at: at)
        self.columns = columns
    }

    /// What a column shows: a field of the record, or cells of its own.
    enum Content: Sendable {
        case field(String)
        case custom(@Sendable (Source) -> String)
    }

    var headers: [String] { columns.map(\.header) }
    var widths: [Int] { columns.map(\.width) }

    func cells(_ source: Source) -> [String] { columns.map { $0.cell(source) } }
}
