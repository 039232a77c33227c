/// Small text helpers shared by usage errors and help.
extension String {
    /// `self` in single quotes for an error message, with control characters escaped
    /// (`'a\nb'`) so a hostile argument cannot forge extra output lines. A value longer
    /// than 64 characters is cut after its first 32, with its length said:
    /// `'0102…' (1026 characters)`.
    var quotedForMessage: String {
        let limit = 64
        let shown = count > limit ? String(prefix(limit / 2)) : self
        var out = "'"
        for scalar in shown.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value):
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return shown.count < count ? out + "…' (\(count) characters)" : out + "'"
    }
}

extension Array where Element == String {
    /// `"a"`, `"a and b"`, `"a, b and c"` (or with `conjunction: "or"`).
    func joinedAsList(conjunction: String = "and") -> String {
        guard count > 1, let last else { return first ?? "" }
        // A loop rather than `dropLast().joined(separator:)`: that generic call looks up
        // ArraySlice's conformances at run time, a scan of the binary's conformance tables
        // at every start-up (BENCHMARKS.md, "Mechanisms kept for speed").
        var out = self[0]
        for word in self[1..<(count - 1)] { out += ", " + word }
        return out + " \(conjunction) " + last
    }
}
