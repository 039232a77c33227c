import BlueZKit

/// What `get-version` and `get-battery` share: a device address, `--timeout`, the vendor
/// protocol's three options (each probe declares them, the same three lines), and one reading
/// taken on a connected device and printed (JSON or text) before the connection is closed. A
/// probe declares its names, help and options, how it reads, and its records; the rest is here.
protocol DeviceProbe: BlectlSubcommand {
    associatedtype Reading: Sendable
    /// `<address>`.
    var address: BluetoothAddress { get }
    /// `--vendor-service`, `--vendor-write`, `--vendor-notify`: all three, or nil.
    var vendor: VendorOptions? { get }
    /// Takes the reading, through `vendor` when given.
    static func read(_ device: ConnectedDevice, vendor: VendorProtocol?, timeout: Duration) async throws -> Reading
    static func record(_ reading: Reading, address: BluetoothAddress) -> JSONValue
    static func text(_ reading: Reading, address: BluetoothAddress) -> [String]
}

extension DeviceProbe {
    var deviceAddress: BluetoothAddress? { address }

    func run(_ context: CommandContext) async throws {
        // The result is printed as soon as it is known, inside the connection: the
        // Disconnect that follows (BlueZ answers it after its 2 s timer) never delays it.
        try await context.withConnectedDevice(address) { connected in
            let reading = try await Self.read(connected, vendor: vendor?.vendorProtocol, timeout: context.remaining)
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(reading, address: address).serialized()])
            case .text: try await context.printer.result(Self.text(reading, address: address))
            }
        }
    }
}
