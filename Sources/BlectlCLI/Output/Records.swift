import BlueZKit

/// What the records of every subcommand share: SIG names in text, fixed-width hex, padding,
/// control characters neutralised (field names documented in man/blectl.1).
enum Records {
    /// A value as JSON fields: `value`, lowercase hex; `text`, the bytes as UTF-8 when they
    /// are valid UTF-8 without control characters (C0, DEL, C1), else null.
    static func value(_ bytes: [UInt8]) -> [(String, JSONValue)] {
        [("value", .string(bytes.hexString)), ("text", .optional(text(of: bytes)))]
    }

    /// A value's hex in text output: `57`, or `(empty)` for no bytes.
    static func hexForPeople(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "(empty)" : bytes.hexString
    }

    /// A value's text in text output: quoted (`"W"`), or `-` when the bytes are not clean
    /// UTF-8 (``text(of:)``).
    static func textForPeople(_ bytes: [UInt8]) -> String {
        text(of: bytes).map { "\"\($0)\"" } ?? "-"
    }

    /// A UUID as messages name it: its JSON form, with the SIG name after it where there is
    /// one (`180f (Battery)`).
    static func named(_ uuid: BluetoothUUID) -> String {
        uuid.named
    }

    /// The bytes as a string when they are valid UTF-8 without control characters.
    static func text(of bytes: [UInt8]) -> String? {
        // A C0 control or DEL (most binary values have one) rules it out with no String made.
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }),
              let string = String(validating: bytes, as: UTF8.self) else { return nil }
        let control = string.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
        return control ? nil : string
    }


    /// Manufacturer data in text: `05f1=0102`, entries joined by `separator`; `-` for none.
    static func manufacturerDataText(_ data: [UInt16: [UInt8]], separator: String = ", ") -> String {
        data.isEmpty ? "-" : data.sorted { $0.key < $1.key }.map { hex4($0.key) + "=" + $0.value.hexString }.joined(separator: separator)
    }

    /// Service data in text: `feed=020031`, entries joined by `separator`; `-` for none.
    /// `named`: each UUID's SIG name after its value (`fe9f=00 (Google LLC)`), as `scan`'s
    /// text form gives the names its JSON form has in `service_names`.
    static func serviceDataText(_ data: [BluetoothUUID: [UInt8]], separator: String = ", ", named: Bool = false) -> String {
        data.isEmpty ? "-" : data.sorted { $0.key.description < $1.key.description }.map { uuid, value in
            uuid.shortString + "=" + value.hexString
                + (named ? AssignedNumbers.name(for: uuid).map { " (\(printable($0)))" } ?? "" : "")
        }.joined(separator: separator)
    }

    /// `yes`, `no`, or `-` when unknown.
    static func yesNo(_ value: Bool?) -> String {
        value.map { $0 ? "yes" : "no" } ?? "-"
    }

    /// `value` in lowercase hex with at least `digits` digits after `0x`.
    static func hex(_ value: some BinaryInteger, digits: Int) -> String {
        let text = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// Rows as aligned columns for a table: every column but the last padded to its widest
    /// cell, two spaces between columns, no trailing spaces.
    static func table(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            var line = ""
            for (i, cell) in row.enumerated() {
                line += i == row.count - 1 ? cell : pad(cell, widths[i]) + "  "
            }
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
    }

    /// A row of a table printed line by line (scan, notify), whose widths cannot wait for the
    /// data: every cell but the last padded to its width, two spaces between cells, no
    /// trailing spaces. A longer cell pushes the rest of its row to the right.
    static func fixedWidthRow(_ cells: [String], widths: [Int]) -> String {
        var line = ""
        for (i, cell) in cells.enumerated() {
            line += i == cells.count - 1 ? cell : pad(cell, widths[i]) + "  "
        }
        while line.hasSuffix(" ") { line.removeLast() }
        return line
    }

    /// `key: value` lines with the values aligned one column after the longest key.
    static func keyValueLines(_ pairs: [(String, String)]) -> [String] {
        let width = (pairs.map(\.0.count).max() ?? 0) + 2
        return pairs.map { pad($0.0 + ":", width) + $0.1 }
    }

    static func label(_ uuid: BluetoothUUID) -> String {
        AssignedNumbers.name(for: uuid).map { " (\($0))" } ?? ""
    }

    static func hex4(_ value: UInt16) -> String {
        String(unsafeUninitializedCapacity: 4) { out in
            for i in 0..<4 { out[i] = lowercaseHexDigit(UInt8(truncatingIfNeeded: value >> (12 - 4 * i)) & 0xF) }
            return 4
        }
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    /// Control characters shown as `?` in text output, so a name cannot move the terminal.
    static func printable(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? "?" : $0 }))
    }
}
