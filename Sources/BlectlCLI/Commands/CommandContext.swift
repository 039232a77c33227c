import BlueZKit

/// What every subcommand starts from: the session, the adapter, the printer, the deadline.
struct CommandContext: Sendable {
    let session: Session
    let adapter: Adapter
    let printer: Printer
    /// When the whole command must be done (`--timeout` from the start).
    let deadline: ContinuousClock.Instant

    var remaining: Duration { max(.zero, deadline - .now) }

    /// Opens the session and picks the adapter before `deadline`.
    static func open(_ global: GlobalOptions, deadline: ContinuousClock.Instant) async throws -> CommandContext {
        let timeout = deadline - .now
        // Opening the bus gets at least a second even with a tiny --timeout, so that
        // `scan --timeout 0` still lists what BlueZ knows.
        let session = try await Session.open(timeout: max(timeout, .seconds(1)))
        let adapter = try Adapter.ready(in: session, named: global.adapter)
        return CommandContext(session: session, adapter: adapter, printer: Printer(format: global.format), deadline: deadline)
    }

    /// Finds the device at `address` (known to BlueZ, or by scanning), connects and resolves
    /// its services, runs `body`, and disconnects what it connected: all within the deadline.
    func withConnectedDevice<T: Sendable>(_ address: BluetoothAddress, _ body: (ConnectedDevice) async throws -> T) async throws -> T {
        let device = try await Device.find(address, on: adapter, timeout: remaining)
        return try await device.withConnection(timeout: remaining, body)
    }
}
