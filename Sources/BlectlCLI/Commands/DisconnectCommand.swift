import BlueZKit

/// `blectl disconnect ADDR...`: disconnect a device, whoever connected it.
struct DisconnectCommand: DeviceCommand {
    static let configuration = CommandConfiguration(
        name: "disconnect",
        abstract: "Disconnect a device, whoever connected it.",
        discussion: [
            "Asks BlueZ to disconnect the device and waits until the link is down. A device that is not connected, or that BlueZ does not know, is left alone: that is success too (was_connected false). blectl never scans for it: a device BlueZ does not know has no link to close.",
        ]
    )

    @Argument(.devices, replacedBy: "from") var addresses: [BluetoothAddress]
    @Option(.timeout(help: "Give up waiting for BlueZ after this many seconds (for each device, with several); decimals allowed."))
    var timeout: Duration = .seconds(20)
    @OptionGroup var fleet: FleetOptions

    func run(device address: BluetoothAddress, _ context: CommandContext,
             report: (DeviceResult) async throws -> Void) async throws {
        // Only a device BlueZ knows can be connected; Device1.Connected as last signalled
        // (the session's cache is current: it was loaded after its match rules were added).
        let device = try context.adapter.knownDevice(address)
        let wasConnected = device.map { known in
            context.session.withCache { $0.property("Connected", of: known.path, on: BlueZ.deviceInterface)?.bool } == true
        } ?? false
        if let device, wasConnected {
            // BlueZ answers once the link is down (after its 2 s disconnect timer).
            do {
                try await device.disconnect(timeout: context.remaining)
            } catch BLEError.disconnected {
                // NotConnected: the link went down meanwhile, which is what was asked.
            }
        }
        try await report(DeviceResult(json: Self.record(address, wasConnected: wasConnected), text: Self.text(address, wasConnected: wasConnected)))
    }

    // MARK: - Records

    static func record(_ address: BluetoothAddress, wasConnected: Bool) -> JSONValue {
        .object([("address", .string(address.description)), ("was_connected", .bool(wasConnected))])
    }

    /// `key: value` lines, keys as in JSON.
    static func text(_ address: BluetoothAddress, wasConnected: Bool) -> [String] {
        Records.keyValueLines([("address", address.description), ("was_connected", Records.yesNo(wasConnected))])
    }
}
