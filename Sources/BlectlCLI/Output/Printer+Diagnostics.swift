extension Printer {
    /// Reports something that is not an error on stderr (a link lost, a reconnection): one
    /// JSON line in json format, `blectl: <text>` in text format. Never on stdout, which
    /// carries results only.
    func diagnostic(_ object: JSONValue, text: String) {
        switch format {
        case .json: Self.write(object.serialized() + "\n", to: .stderr)
        case .text: Self.write("blectl: \(text)\n", to: .stderr)
        }
    }
}
