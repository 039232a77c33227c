import BlueZKit

/// What a blectl command line asks for, as produced by `parseCommandLine(_:)`.
public enum Invocation: Sendable, Equatable {
    /// Print this help text to stdout as is (it ends with a newline) and exit 0.
    case help(String)
    /// Print the version to stdout and exit 0.
    case version
    /// Run a subcommand.
    case run(GlobalOptions, Subcommand)
}

/// Options accepted before or after any subcommand.
public struct GlobalOptions: Sendable, Equatable {
    /// The format used when `--format` is not given.
    public static let defaultFormat = OutputFormat.json

    /// `--adapter`: the adapter's name, `hci` then digits (`"hci0"`); `nil` when not
    /// given, leaving the choice of adapter to the caller.
    public var adapter: String?
    /// `--format`: how results are printed on stdout.
    public var format: OutputFormat

    public init(adapter: String? = nil, format: OutputFormat = GlobalOptions.defaultFormat) {
        self.adapter = adapter
        self.format = format
    }
}

/// How results are printed on stdout.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// One JSON object per result; streams are JSON Lines, one object per line.
    case json
    /// Human-readable lines.
    case text
}

/// The subcommand to run, with its parsed options.
public enum Subcommand: Sendable, Equatable {
    /// `blectl scan`: discover advertising devices.
    case scan(ScanOptions)
    /// `blectl connect <address>`.
    case connect(DeviceOptions)
    /// `blectl get-version <address>` (alias `version`): the Firmware Revision String,
    /// or the vendor protocol's answer when `VendorProtocolOptions` is present.
    case getVersion(DeviceOptions, VendorProtocolOptions?)
    /// `blectl get-battery <address>` (alias `battery`): the Battery Level, or the
    /// vendor protocol's answer when `VendorProtocolOptions` is present.
    case getBattery(DeviceOptions, VendorProtocolOptions?)
}

/// Options of `blectl scan`.
public struct ScanOptions: Sendable, Equatable {
    /// How long a scan lasts when `--timeout` is not given: 10 s.
    public static let defaultTimeout = Duration.seconds(10)
    /// The accepted `--rssi-min` range in dBm (BlueZ doc/org.bluez.Adapter.rst,
    /// SetDiscoveryFilter `RSSI`).
    public static let rssiRange: ClosedRange<Int16> = -127...20

    /// `--timeout`: how long to scan, 0 to 86400 s.
    public var timeout: Duration
    /// `--name`, repeatable: report only devices whose name contains one of these
    /// (case-insensitive substring match); empty means no name filter. Never contains
    /// an empty string.
    public var names: [String]
    /// `--service`, repeatable: report only devices advertising one of these service
    /// UUIDs; empty means no service filter.
    public var services: [BluetoothUUID]
    /// `--rssi-min`: report only devices heard at this RSSI (dBm) or stronger, within
    /// `rssiRange`; `nil` means no threshold.
    public var rssiMin: Int16?
    /// `--updates`: print a line for every advertisement update, not just the first
    /// sighting of each device.
    public var updates: Bool

    public init(
        timeout: Duration = ScanOptions.defaultTimeout, names: [String] = [],
        services: [BluetoothUUID] = [], rssiMin: Int16? = nil, updates: Bool = false
    ) {
        self.timeout = timeout
        self.names = names
        self.services = services
        self.rssiMin = rssiMin
        self.updates = updates
    }
}

/// Options of the subcommands that talk to one device.
public struct DeviceOptions: Sendable, Equatable {
    /// How long the whole operation may take when `--timeout` is not given: 20 s.
    public static let defaultTimeout = Duration.seconds(20)

    /// `<address>`: the device.
    public var address: BluetoothAddress
    /// `--timeout`: how long the whole operation may take, connecting included,
    /// 0 to 86400 s.
    public var timeout: Duration

    public init(address: BluetoothAddress, timeout: Duration = DeviceOptions.defaultTimeout) {
        self.address = address
        self.timeout = timeout
    }
}

/// `--vendor-service`, `--vendor-write` and `--vendor-notify` (all three or none): the
/// library's description of a vendor request/response protocol.
public typealias VendorProtocolOptions = VendorProtocol
