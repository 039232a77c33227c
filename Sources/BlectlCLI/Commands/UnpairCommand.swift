import BlueZKit

/// `blectl unpair ADDR`: Adapter1.RemoveDevice: the pairing goes with the device object.
struct UnpairCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "unpair",
        abstract: "Remove a device and its pairing from BlueZ.",
        discussion: [
            "Asks BlueZ to remove the device (Adapter1.RemoveDevice): its pairing and keys go with it, and a connected device is disconnected first, whoever connected it. A device BlueZ does not know, because it never saw it or it was removed already, exits 2 (device_not_found); blectl does not scan for it.",
        ]
    )

    @Argument(.device) var address: BluetoothAddress
    @Option(.timeout()) var timeout: Duration = .seconds(20)

    var deviceAddress: BluetoothAddress? { address }

    func run(_ context: CommandContext) async throws {
        let device = Device(adapter: try context.adapter, address: address)
        let before = device.pairingState
        let wasConnected = device.current?.connected ?? false
        try await device.remove(timeout: context.remaining)
        let removal = Removal(wasPaired: before?.paired ?? false, wasConnected: wasConnected)
        switch context.printer.format {
        case .json: try await context.printer.results([Self.record(removal, address: address).serialized()])
        case .text: try await context.printer.results(Self.text(removal, address: address))
        }
    }

    /// What the removed device was.
    struct Removal: Equatable {
        var wasPaired: Bool
        var wasConnected: Bool
    }

    // MARK: - Records

    static func record(_ removal: Removal, address: BluetoothAddress) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("removed", .bool(true)),
            ("was_paired", .bool(removal.wasPaired)),
            ("was_connected", .bool(removal.wasConnected)),
        ])
    }

    static func text(_ removal: Removal, address: BluetoothAddress) -> [String] {
        Records.keyValueLines([("address", address.description), ("removed", "yes"), ("was_paired", Records.yesNo(removal.wasPaired)),
                               ("was_connected", Records.yesNo(removal.wasConnected))])
    }
}
