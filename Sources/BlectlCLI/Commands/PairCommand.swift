import BlueZKit

/// `blectl pair ADDR [--trust] [--passkey N]`: pair through an agent of blectl's own, print
/// Paired/Bonded/Trusted, disconnect a link Pair opened.
struct PairCommand: BlectlSubcommand {
    static let trust = Flag(
        "trust",
        help: "Also mark the device trusted (Device1.Trusted), so that BlueZ lets it connect without asking."
    )
    static let passkey = Option<Passkey>(
        "passkey", valueName: "passkey",
        help: "The passkey the device displays, 0 to 999999: blectl's agent types it when BlueZ asks. Without it, Just Works only.",
        parser: .passkey
    )

    static let commandName = "pair"
    static let command = CommandSpec(
        name: commandName,
        abstract: "Pair with a device, and print its pairing state.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), registers a pairing agent of blectl's own (NoInputNoOutput, or KeyboardOnly with --passkey) and asks BlueZ to pair, which connects the device if needed; a link the pairing opened is closed at the end. A device paired already is left as it is (success). A failed pairing, such as a wrong passkey, exits 77 (authentication_failed).",
        ],
        arguments: [DeviceOptions.addressArgument.spec],
        options: [DeviceOptions.timeoutOption.spec, trust.spec, passkey.spec]
    )

    var options: DeviceOptions
    var trust: Bool
    var passkey: Passkey?
    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(options: DeviceOptions, trust: Bool = false, passkey: Passkey? = nil) {
        self.options = options
        self.trust = trust
        self.passkey = passkey
    }

    init(from values: ParsedValues) throws(UsageError) {
        options = try DeviceOptions(from: values)
        trust = values.isSet(Self.trust)
        passkey = try values.value(of: Self.passkey)
    }

    func run(_ context: CommandContext) async throws {
        let device = try await Device.find(options.address, on: context.adapter, timeout: context.remaining)
        // The agent answers for this device only: while registered it may be bluetoothd's
        // default agent, asked about other devices too.
        let agent = Agent(passkey: passkey, devices: [device.path])
        try await device.withPairing(agent: agent, timeout: context.remaining, disconnectTimeout: CommandContext.disconnectWait) { _ in
            if trust { try await device.setTrusted(true, timeout: context.remaining) }
            let state = try await device.readPairingState(timeout: context.remaining)
            // Printed before the clean-up (UnregisterAgent, the Disconnect BlueZ answers
            // after its 2 s timer), which never delays it.
            switch context.printer.format {
            case .json: try await context.printer.result([Self.record(state, address: options.address).serialized()])
            case .text: try await context.printer.result(Self.text(state, address: options.address))
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
