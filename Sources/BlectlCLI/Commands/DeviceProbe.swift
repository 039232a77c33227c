import BlueZKit

/// What `get-version` and `get-battery` share: device addresses (``DeviceCommand``),
/// `--timeout`, the vendor protocol's three options (each probe declares them, the same three
/// lines), and one reading taken on each connected device and reported before the connection
/// is closed. A probe declares its names, help and options, how it reads, and its records;
/// the rest is here.
protocol DeviceProbe: DeviceCommand {
    associatedtype Reading: Sendable
    /// `--vendor-service`, `--vendor-write`, `--vendor-notify`: all three, or nil.
    var vendor: VendorOptions? { get }
    /// Takes the reading, through `vendor` when given.
    static func read(_ device: ConnectedDevice, vendor: VendorProtocol?, timeout: Duration) async throws -> Reading
    static func record(_ reading: Reading, address: BluetoothAddress) -> JSONValue
    static func text(_ reading: Reading, address: BluetoothAddress) -> [String]
}

extension DeviceProbe {
    func run(device address: BluetoothAddress, _ context: CommandContext,
             report: (DeviceResult) async throws -> Void) async throws {
        // The result is printed as soon as it is known, inside the connection: the
        // Disconnect that follows (BlueZ answers it after its 2 s timer) never delays it.
        try await context.withConnectedDevice(address) { connected in
            let reading = try await Self.read(connected, vendor: vendor?.vendorProtocol, timeout: context.remaining)
            try await report(DeviceResult(json: Self.record(reading, address: address), text: Self.text(reading, address: address)))
        }
    }
}
