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

    /// The JSON object of one adapter: its name, then the Adapter1 properties BlueZKit
    /// declares (``AdapterProperties``, in the table's order, as ``PropertyFields`` shows
    /// them) except ``notShown``. A property added to the table shows here with no change.
    static let layout = Self.layout(declaring: AdapterProperties.table)

    /// The Adapter1 properties `adapters` has never shown, left out so that its lines stay
    /// as scripts know them (Name would also clash with the record's `name`, the adapter's).
    static let notShown: Set<String> = ["AddressType", "Name", "Class", "PairableTimeout", "DiscoverableTimeout", "UUIDs", "Modalias"]

    static func layout(declaring table: PropertyTable<AdapterProperties>) -> RecordLayout<AdapterInfo> {
        RecordLayout([RecordField("name", json: { .string($0.name) }, text: { $0.name })]
            + table.declarations.filter { !notShown.contains($0.name) }.flatMap { declaration in
                [PropertyFields.field(declaration, of: { $0.properties })] + (named[declaration.name].map { [$0] } ?? [])
            })
    }

    /// Fields that name a property's number, each after its property's field: the company of
    /// Manufacturer (`manufacturer_name`, null when the SIG has not assigned it) and the Core
    /// Specification version of Version (`version_name`, `"5.2"`).
    static let named: [String: RecordField<AdapterInfo>] = [
        "Manufacturer": RecordField("manufacturer_name", json: { manufacturerName($0) }, text: { manufacturerName($0) ?? "-" }),
        "Version": RecordField("version_name", json: { versionName($0) }, text: { versionName($0) ?? "-" }),
    ]

    static func manufacturerName(_ a: AdapterInfo) -> String? {
        a.manufacturer.flatMap(AssignedNumbers.companyName(for:))
    }

    static func versionName(_ a: AdapterInfo) -> String? {
        a.version.flatMap(AssignedNumbers.coreVersionName(for:))
    }

    static func record(_ a: AdapterInfo) -> JSONValue {
        layout.object(a)
    }

    /// The text table's columns, a column per JSON field: ALIAS last, a field not placed
    /// here before it.
    static let columns = Self.columns(of: layout)

    static func columns(of layout: RecordLayout<AdapterInfo>) -> TextColumns<AdapterInfo> {
        TextColumns(layout, [
            ("NAME", .field("name"), 0), ("ADDRESS", .field("address"), 0), ("POWERED", .field("powered"), 0),
            ("POWER_STATE", .field("power_state"), 0), ("DISCOVERING", .field("discovering"), 0), ("PAIRABLE", .field("pairable"), 0),
            ("DISCOVERABLE", .field("discoverable"), 0), ("ROLES", .field("roles"), 0), ("ALIAS", .field("alias"), 0),
        ], othersBefore: "ALIAS")
    }

    /// A header and one aligned row per adapter; nothing at all for no adapter.
    static func table(_ adapters: [AdapterInfo]) -> [String] {
        guard !adapters.isEmpty else { return [] }
        return Records.table([columns.headers] + adapters.map(columns.cells))
    }
}
