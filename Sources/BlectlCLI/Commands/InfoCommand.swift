import BlueZKit

/// `blectl info ADDR...`: what BlueZ knows of one device, without connecting; an unknown device
/// is looked for by scanning.
struct InfoCommand: DeviceCommand {
    static let configuration = CommandConfiguration(
        name: "info",
        abstract: "Show what BlueZ knows about a device.",
        discussion: [
            "Prints the device's org.bluez.Device1 properties (and Battery1's percentage) as one object, null where BlueZ has no value, without connecting. A device BlueZ does not know is looked for by scanning until the timeout (exit 2 if it is not heard; scanning needs a powered adapter, else exit 69); one BlueZ knows is printed even when the adapter is powered off. Without --adapter: the first powered adapter, else the first one.",
        ]
    )

    /// Known devices need an adapter, not the radio; the scan for an unknown one checks power.
    static var adapterRequirement: AdapterRequirement { .present }

    @Argument(.devices, replacedBy: "from") var addresses: [BluetoothAddress]
    @Option(.timeout(help: "Give up after this many seconds (on each device, with several), scanning for a device BlueZ does not know included; decimals allowed."))
    var timeout: Duration = .seconds(10)
    @OptionGroup var fleet: FleetOptions
    @OptionGroup var bindKeys: BindKeyOptions

    func run(device address: BluetoothAddress, _ context: CommandContext,
             report: (DeviceResult) async throws -> Void) async throws {
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
        bindKeys.reportUnavailableDecryption(context.printer)
        let layout = bindKeys.entries.isEmpty ? Self.layout : Self.layout(bthomeBindKeys: bindKeys.keys)
        try await report(DeviceResult(json: layout.object(info), text: layout.keyValueLines(info)))
    }

    // MARK: - Records (also `devices`' lines)

    /// The JSON object of one device, `info`'s result and each line of `devices`: every
    /// Device1 property BlueZKit declares (``DeviceProperties``, as ``DeviceFields`` shows
    /// them), Battery1's percentage, and the adapter's name.
    static let layout = layout(bthomeBindKeys: [:])

    /// ``layout`` with encrypted BTHome frames decrypted with `bthomeBindKeys` (`--bindkey`).
    static func layout(bthomeBindKeys: [BluetoothAddress: BTHomeBindKey]) -> RecordLayout<DeviceInfo> {
        RecordLayout(DeviceFields.fields(DeviceProperties.table, for: .info, bthomeBindKeys: bthomeBindKeys) + [
            RecordField("battery_percentage", json: { .optional($0.batteryPercentage) }, text: { $0.batteryPercentage.map { "\($0)%" } ?? "-" }),
            RecordField("adapter", json: { .string($0.adapterName) }, text: { $0.adapterName }),
        ])
    }

    static func record(_ d: DeviceInfo) -> JSONValue {
        layout.object(d)
    }

    /// `key: value` lines, one per JSON field, keys as in JSON; `-` where JSON has null (or
    /// an empty list).
    static func text(_ d: DeviceInfo) -> [String] {
        layout.keyValueLines(d)
    }
}
