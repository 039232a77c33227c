/// Small text helpers shared by usage errors and help.
extension String {
    /// `self` in single quotes for an error message, with control characters escaped
    /// (`'a\nb'`) so a hostile argument cannot forge extra output lines.
    var quotedForMessage: String {
        var out = "'"
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value):
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }
}

extension Array where Element == String {
    /// `"a"`, `"a and b"`, `"a, b and c"` (or with `conjunction: "or"`).
    func joinedAsList(conjunction: String = "and") -> String {
        guard count > 1, let last else { return first ?? "" }
        return dropLast().joined(separator: ", ") + " \(conjunction) " + last
    }
}
