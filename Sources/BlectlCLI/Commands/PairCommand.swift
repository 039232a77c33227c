import BlueZKit

/// `blectl pair ADDR [--trust] [--passkey N]`: pair through an agent of blectl's own, print
/// Paired/Bonded/Trusted, disconnect a link Pair opened.
struct PairCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "pair",
        abstract: "Pair with a device, and print its pairing state.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), registers a pairing agent of blectl's own (NoInputNoOutput, or KeyboardOnly with --passkey) and asks BlueZ to pair, which connects the device if needed; a link the pairing opened is closed at the end. A device paired already is left as it is (success). A failed pairing, such as a wrong passkey, exits 77 (authentication_failed).",
        ]
    )

    @Argument(.device) var address: BluetoothAddress
    @Option(.connectionTimeout) var timeout: Duration = .seconds(20)

    /// `--trust`: also set Device1.Trusted.
    @Flag("trust", help: "Also mark the device trusted (Device1.Trusted), so that BlueZ lets it connect without asking.")
    var trust = false

    /// `--passkey`: what the agent answers when BlueZ asks for a passkey; nil: Just Works only.
    @Option("passkey", valueName: "passkey",
            help: "The passkey the device displays, 0 to 999999: blectl's agent types it when BlueZ asks. Without it, Just Works only.",
            parser: .passkey)
    var passkey: Passkey?

    var deviceAddress: BluetoothAddress? { address }

    func run(_ context: CommandContext) async throws {
        let device = try await Device.find(address, on: context.adapter, timeout: context.remaining)
        // The agent answers for this device only: while registered it may be bluetoothd's
        // default agent, asked about other devices too.
        let agent = Agent(passkey: passkey, devices: [device.path])
        try await device.withPairing(agent: agent, timeout: context.remaining, disconnectTimeout: CommandContext.disconnectWait) { _ in
            if trust { try await device.setTrusted(true, timeout: context.remaining) }
            let state = try await device.readPairingState(timeout: context.remaining)
            // Printed before the clean-up (UnregisterAgent, the Disconnect BlueZ answers
            // after its 2 s timer), which never delays it.
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(state, address: address).serialized()])
            case .text: try await context.printer.result(Self.text(state, address: address))
            }
        }
    }

    // MARK: - Records

    static func record(_ state: PairingState, address: BluetoothAddress) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("paired", .bool(state.paired)),
            ("bonded", state.bonded.map { .bool($0) } ?? .null),
            ("trusted", .bool(state.trusted)),
        ])
    }

    static func text(_ state: PairingState, address: BluetoothAddress) -> [String] {
        Records.keyValueLines([("address", address.description), ("paired", Records.yesNo(state.paired)),
                               ("bonded", Records.yesNo(state.bonded)), ("trusted", Records.yesNo(state.trusted))])
    }
}
