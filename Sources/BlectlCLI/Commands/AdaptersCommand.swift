import BlueZKit

/// `blectl adapters`: JSON Lines, one per adapter BlueZ has, powered or not.
struct AdaptersCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "adapters",
        abstract: "List the Bluetooth adapters, powered or not.",
        discussion: [
            "Prints one JSON line per adapter (org.bluez.Adapter1), ordered by object path; with --adapter, only that one (exit 69 if BlueZ has no such adapter). No adapter needs to be powered; when bluetoothd runs but has no adapter, nothing is printed and the exit status is 0.",
        ]
    )

    /// Lists adapters itself: none needs to be there, let alone powered.
    static var adapterRequirement: AdapterRequirement { .none }

    @Option(.timeout()) var timeout: Duration = .seconds(10)

    func run(_ context: CommandContext) async throws {
        var adapters = Adapter.all(in: context.session)
        if let name = context.adapterName {
            adapters = [try Adapter.named(name, in: context.session)]
        }
        let infos = adapters.compactMap(\.info)
        switch context.printer.format {
        case .json: try await context.printer.results(infos.map { Self.record($0).serialized() })
        case .text: try await context.printer.results(Self.table(infos))
        }
    }

    // MARK: - Records

    static func record(_ a: AdapterInfo) -> JSONValue {
        .object([
            ("name", .string(a.name)),
            ("address", .optional(a.address?.description)),
            ("alias", .optional(a.alias)),
            ("powered", .optional(a.powered)),
            ("power_state", .optional(a.powerState)),
            ("discovering", .optional(a.discovering)),
            ("pairable", .optional(a.pairable)),
            ("discoverable", .optional(a.discoverable)),
            ("roles", a.roles.map { .array($0.map { .string($0) }) } ?? .null),
        ])
    }

    static let columns = ["NAME", "ADDRESS", "POWERED", "POWER_STATE", "DISCOVERING", "PAIRABLE", "DISCOVERABLE", "ROLES", "ALIAS"]

    /// A header and one aligned row per adapter, a column per JSON field; nothing at all for
    /// no adapter.
    static func table(_ adapters: [AdapterInfo]) -> [String] {
        guard !adapters.isEmpty else { return [] }
        return Records.table([columns] + adapters.map { a in
            [
                a.name,
                a.address?.description ?? "-",
                Records.yesNo(a.powered),
                a.powerState.map(Records.printable) ?? "-",
                Records.yesNo(a.discovering),
                Records.yesNo(a.pairable),
                Records.yesNo(a.discoverable),
                a.roles.map { $0.isEmpty ? "-" : Records.printable($0.joined(separator: ",")) } ?? "-",
                a.alias.map(Records.printable) ?? "-",
            ]
        })
    }
}
