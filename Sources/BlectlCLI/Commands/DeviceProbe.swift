import BlueZKit

/// What `get-version` and `get-battery` share: a device address, `--timeout`, the vendor
/// protocol's three options, and one reading taken on a connected device and printed (JSON
/// or text) before the connection is closed. A probe declares its name and help, how it
/// reads, and its records; the rest is here.
protocol DeviceProbe: BlectlSubcommand {
    associatedtype Reading: Sendable
    /// Name, aliases, abstract and discussion; arguments and options are added here.
    static var declaration: CommandSpec { get }
    var options: DeviceOptions { get }
    var vendor: VendorProtocolOptions? { get }
    init(options: DeviceOptions, vendor: VendorProtocolOptions?)
    /// Takes the reading, through `vendor` when given.
    static func read(_ device: ConnectedDevice, vendor: VendorProtocolOptions?, timeout: Duration) async throws -> Reading
    static func record(_ reading: Reading, address: BluetoothAddress) -> JSONValue
    static func text(_ reading: Reading, address: BluetoothAddress) -> [String]
}

extension DeviceProbe {
    static var command: CommandSpec {
        var spec = declaration
        spec.arguments = [DeviceOptions.addressArgument.spec]
        spec.options = [DeviceOptions.timeoutOption.spec] + VendorOptions.specs
        spec.allOrNoneGroups = [VendorOptions.specs.map(\.long)]
        return spec
    }

    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(from values: ParsedValues) throws(UsageError) {
        self.init(options: try DeviceOptions(from: values), vendor: try VendorOptions.options(from: values))
    }

    func run(_ context: CommandContext) async throws {
        // The result is printed as soon as it is known, inside the connection: the
        // Disconnect that follows (BlueZ answers it after its 2 s timer) never delays it.
        try await context.withConnectedDevice(options.address) { connected in
            let reading = try await Self.read(connected, vendor: vendor, timeout: context.remaining)
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(reading, address: options.address).serialized()])
            case .text: try await context.printer.result(Self.text(reading, address: options.address))
            }
        }
    }
}
