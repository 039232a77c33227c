import BlueZKit

/// `blectl devices`: JSON Lines, one per device BlueZ has under the adapter (cached ones
/// included), each as `info` prints it.
struct DevicesCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "devices",
        abstract: "List the devices BlueZ knows, without scanning.",
        discussion: [
            "Prints one JSON line per device BlueZ has under the adapter, as info prints it, ordered by address: devices heard earlier and still cached, paired ones, connected ones, whether in range or not. Nothing is scanned or connected, and the adapter may be powered off; without --adapter: the first powered adapter, else the first one. With --format text, a table; its FLAGS column shows P paired, B bonded, T trusted, X blocked, C connected, R services resolved (- no, ? unknown).",
        ]
    )

    /// Listing what BlueZ has cached needs an adapter, not the radio.
    static var adapterRequirement: AdapterRequirement { .present }

    @Option(.timeout()) var timeout: Duration = .seconds(10)

    /// `--connected`: only connected devices.
    @Flag("connected", help: "Only list devices that are connected.")
    var onlyConnected = false

    /// `--paired`: only paired devices (both filters: devices that are both).
    @Flag("paired", help: "Only list devices that are paired. With --connected, only devices that are both.")
    var onlyPaired = false

    /// Whether `device` passes the filters given: each one given must hold.
    func includes(_ device: DeviceInfo) -> Bool {
        (!onlyConnected || device.connected == true) && (!onlyPaired || device.paired == true)
    }

    @OptionGroup var bindKeys: BindKeyOptions

    func run(_ context: CommandContext) async throws {
        bindKeys.reportUnavailableDecryption(context.printer)
        let devices = try context.adapter.deviceInfos.filter(includes)
        let layout = bindKeys.entries.isEmpty ? InfoCommand.layout : InfoCommand.layout(bthomeBindKeys: bindKeys.keys)
        switch context.printer.format {
        case .json: try await context.printer.results(devices.map { layout.object($0).serialized() })
        case .text: try await context.printer.results(Self.table(devices))
        }
    }

    // MARK: - Records

    /// The table's columns over `info`'s record: the six booleans in FLAGS, a field not
    /// placed here at the end; `decoded` is left to the JSON and `info`'s text (too wide for a column).
    static let columns = TextColumns(InfoCommand.layout, [
        ("ADDRESS", .field("address"), 0), ("TYPE", .field("address_type"), 0), ("FLAGS", .custom(flags), 0),
        ("RSSI", .field("rssi"), 0), ("TX_POWER", .field("tx_power"), 0), ("BATTERY", .field("battery_percentage"), 0),
        ("NAME", .field("name"), 0), ("ALIAS", .field("alias"), 0), ("ICON", .field("icon"), 0),
        ("APPEARANCE", .field("appearance"), 0), ("CLASS", .field("class"), 0), ("MODALIAS", .field("modalias"), 0),
        ("ADAPTER", .field("adapter"), 0), ("UUIDS", .field("uuids"), 0), ("MANUFACTURER_DATA", .field("manufacturer_data"), 0),
        ("SERVICE_DATA", .field("service_data"), 0),
    ], omitted: flagKeys.union(["decoded"]))

    /// A header and one aligned row per device, every JSON field in a column (the six
    /// booleans in FLAGS); nothing at all for no device.
    static func table(_ devices: [DeviceInfo]) -> [String] {
        guard !devices.isEmpty else { return [] }
        return Records.table([columns.headers] + devices.map(columns.cells))
    }

    /// The fields FLAGS shows rather than columns of their own.
    static let flagKeys: Set<String> = ["paired", "bonded", "trusted", "blocked", "connected", "services_resolved"]

    /// `PBTXCR`: paired, bonded, trusted, blocked, connected, services resolved; `-` for
    /// false, `?` for unknown.
    @Sendable static func flags(_ d: DeviceInfo) -> String {
        let bits: [(Bool?, Character)] = [(d.paired, "P"), (d.bonded, "B"), (d.trusted, "T"), (d.blocked, "X"),
                                          (d.connected, "C"), (d.servicesResolved, "R")]
        return String(bits.map { value, letter in value.map { $0 ? letter : "-" } ?? "?" })
    }
}
