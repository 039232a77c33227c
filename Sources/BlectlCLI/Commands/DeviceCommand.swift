import BlueZKit

/// A subcommand that works on one device at a time and takes one or more (`get-battery`,
/// `get-version`, `read`, `info`, `disconnect`): `<address> ...` and `--from` name them,
/// ``FleetOptions`` paces them. It declares the work on one device
/// (``run(device:_:report:)``); the rest is here.
///
/// One address and no `--from` is the one-device form: the result on stdout as it always was,
/// a failure on stderr with its exit status. Otherwise each device gets one line on stdout
/// (``FleetRun``).
protocol DeviceCommand: BlectlSubcommand {
    /// `<address> ...`: the devices named on the command line, in order (none with `--from`).
    var addresses: [BluetoothAddress] { get }
    /// `--from`, `--parallel`, `--overall-timeout`.
    var fleet: FleetOptions { get }
    /// The work on one device, within `context`'s deadline (the device's own `--timeout`):
    /// its result handed to `report` as soon as it is known (inside the connection, before
    /// the Disconnect that follows). One function, so that one device's attempt is what a
    /// run repeats or wraps.
    /// - Throws: what went wrong on that device (its error object), or what `report` throws.
    func run(device address: BluetoothAddress, _ context: CommandContext,
             report: (DeviceResult) async throws -> Void) async throws
}

/// One device's result: its JSON object, and its text lines (one for `get-battery`, `key:
/// value` lines for the others).
struct DeviceResult: Sendable {
    var json: JSONValue
    var text: [String]
}

extension DeviceCommand {
    /// One address and no `--from`: today's one-device form.
    var isOneDevice: Bool { fleet.from == nil && addresses.count == 1 }

    var deviceAddress: BluetoothAddress? { isOneDevice ? addresses.first : nil }

    func run(_ context: CommandContext) async throws {
        guard isOneDevice else {
            try await FleetRun(command: self, context: context).run()
            return
        }
        let deadline = fleet.overallTimeout.map { min(context.deadline, ContinuousClock.now + $0) } ?? context.deadline
        try await run(device: addresses[0], context.until(deadline)) { result in
            switch context.printer.format {
            case .json: try await context.printer.result([result.json.serialized()])
            case .text: try await context.printer.result(result.text)
            }
        }
    }
}
