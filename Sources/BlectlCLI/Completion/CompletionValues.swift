import BlueZKit

/// What the completion scripts offer from bluetoothd (`blectl __complete devices|adapters`):
/// read from BlueZ's objects (GetManagedObjects), nothing scanned or connected.
enum CompletionValues {
    /// How long Tab waits for bluetoothd by default: 0.5 s. Past it, nothing is offered.
    static let defaultLimit = Duration.milliseconds(500)

    /// The environment variable that sets another limit, in seconds as `--timeout` takes
    /// them (`2`, `0.25`), for a slow machine or bus.
    static let limitVariable = "BLECTL_COMPLETION_TIMEOUT"

    /// The limit `value` (the variable's value, nil when unset) asks for, else
    /// ``defaultLimit``: a value `--timeout` would refuse is ignored (completion never complains).
    static func limit(_ value: String?) -> Duration {
        guard let value, let limit = try? ValueParser.seconds.parse(value) else {
            return defaultLimit
        }
        return limit
    }

    /// `value<TAB>description` lines: addresses with the device's alias (else its name),
    /// sorted by address, each once across adapters; adapter names with their address.
    /// Empty when the bus or bluetoothd does not answer within `limit`.
    static func lines(_ kind: CompletionValueKind, limit: Duration) async -> [String] {
        guard let session = try? await Session.open(timeout: limit) else { return [] }
        defer { session.close() }
        let adapters = Adapter.all(in: session)
        switch kind {
        case .adapters:
            return adapters.map { adapter in
                let address = adapter.info?.address?.description ?? ""
                return address.isEmpty ? adapter.name : "\(adapter.name)\t\(address)"
            }
        case .devices:
            var seen = Set<String>()
            var lines: [String] = []
            for device in adapters.flatMap(\.deviceInfos).sorted(by: { $0.address.description < $1.address.description }) {
                let address = device.address.description
                guard seen.insert(address).inserted else { continue }
                let label = (device.alias ?? device.name).map(oneLine) ?? ""
                lines.append(label.isEmpty ? address : "\(address)\t\(label)")
            }
            return lines
        }
    }

    /// A name as one line of printable text: tabs, newlines and other controls become spaces.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control ? " " : $0
        }))
    }
}
