import BlueZKit

/// `blectl info ADDR`: what BlueZ knows of one device, without connecting; an unknown device
/// is looked for by scanning.
struct InfoCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "info",
        abstract: "Show what BlueZ knows about a device.",
        discussion: [
            "Prints the device's org.bluez.Device1 properties (and Battery1's percentage) as one object, null where BlueZ has no value, without connecting. A device BlueZ does not know is looked for by scanning until the timeout (exit 2 if it is not heard; scanning needs a powered adapter, else exit 69); one BlueZ knows is printed even when the adapter is powered off. Without --adapter: the first powered adapter, else the first one.",
        ]
    )

    /// Known devices need an adapter, not the radio; the scan for an unknown one checks power.
    static var adapterRequirement: AdapterRequirement { .present }

    @Argument(.device) var address: BluetoothAddress
    @Option(.timeout(help: "Give up after this many seconds, scanning for a device BlueZ does not know included; decimals allowed."))
    var timeout: Duration = .seconds(10)

    var deviceAddress: BluetoothAddress? { address }

    func run(_ context: CommandContext) async throws {
        let adapter = try context.adapter
        let info: DeviceInfo
        if let known = adapter.deviceInfo(address) {
            info = known
        } else {
            // No time to scan (--timeout 0): not found, whatever the adapter's power.
            guard context.remaining > .zero else { throw BLEError.deviceNotFound(address) }
            // Scanning needs the radio: as for every command that scans, 69 when it is off.
            if let why = adapter.unavailability { throw BLEError.unavailable(why, during: BLEOperation(.adapter)) }
            info = try await DeviceInfo.find(address, on: adapter, timeout: context.remaining)
        }
        switch context.printer.format {
        case .json: try await context.printer.results([Self.record(info).serialized()])
        case .text: try await context.printer.results(Self.text(info))
        }
    }

    // MARK: - Records (also `devices`' lines)

    /// The JSON object of one device: `info`'s result and each line of `devices`.
    static func record(_ d: DeviceInfo) -> JSONValue {
        .object([
            ("address", .string(d.address.description)),
            ("address_type", .optional(d.addressType)),
            ("name", .optional(d.name)),
            ("alias", .optional(d.alias)),
            ("paired", .optional(d.paired)),
            ("bonded", .optional(d.bonded)),
            ("trusted", .optional(d.trusted)),
            ("blocked", .optional(d.blocked)),
            ("connected", .optional(d.connected)),
            ("services_resolved", .optional(d.servicesResolved)),
            ("rssi", .optional(d.rssi)),
            ("tx_power", .optional(d.txPower)),
            ("appearance", .optional(d.appearance.map(Int.init))),
            ("icon", .optional(d.icon)),
            ("class", .optional(d.deviceClass.map(Int.init))),
            ("modalias", .optional(d.modalias)),
            ("uuids", .array(d.uuids.map { .string($0.shortString) })),
            ("manufacturer_data", Records.manufacturerData(d.manufacturerData)),
            ("service_data", Records.serviceData(d.serviceData)),
            ("battery_percentage", .optional(d.batteryPercentage)),
            ("adapter", .string(d.adapterName)),
        ])
    }

    /// `key: value` lines, one per JSON field, keys as in JSON; `-` where JSON has null (or
    /// an empty list).
    static func text(_ d: DeviceInfo) -> [String] {
        Records.keyValueLines([
            ("address", d.address.description),
            ("address_type", d.addressType ?? "-"),
            ("name", d.name.map(Records.printable) ?? "-"),
            ("alias", d.alias.map(Records.printable) ?? "-"),
            ("paired", Records.yesNo(d.paired)),
            ("bonded", Records.yesNo(d.bonded)),
            ("trusted", Records.yesNo(d.trusted)),
            ("blocked", Records.yesNo(d.blocked)),
            ("connected", Records.yesNo(d.connected)),
            ("services_resolved", Records.yesNo(d.servicesResolved)),
            ("rssi", dBm(d.rssi)),
            ("tx_power", dBm(d.txPower)),
            ("appearance", d.appearance.map { Records.hex($0, digits: 4) } ?? "-"),
            ("icon", d.icon.map(Records.printable) ?? "-"),
            ("class", d.deviceClass.map { Records.hex($0, digits: 6) } ?? "-"),
            ("modalias", d.modalias.map(Records.printable) ?? "-"),
            ("uuids", d.uuids.isEmpty ? "-" : d.uuids.map(Records.named).joined(separator: ", ")),
            ("manufacturer_data", Records.manufacturerDataText(d.manufacturerData)),
            ("service_data", Records.serviceDataText(d.serviceData)),
            ("battery_percentage", d.batteryPercentage.map { "\($0)%" } ?? "-"),
            ("adapter", d.adapterName),
        ])
    }

    static func dBm(_ value: Int?) -> String {
        value.map { "\($0) dBm" } ?? "-"
    }
}
