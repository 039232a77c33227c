import BlueZKit

/// What every subcommand starts from: the session, the adapter, the printer, the deadline.
struct CommandContext: Sendable {
    let session: Session
    let adapter: Adapter
    let printer: Printer
    /// When the whole command must be done (`--timeout` from the start).
    let deadline: ContinuousClock.Instant

    var remaining: Duration { max(.zero, deadline - .now) }

    /// Opens the session and picks the adapter within `timeout`.
    static func open(_ global: GlobalOptions, timeout: Duration) async throws -> CommandContext {
        let deadline = ContinuousClock.now + timeout
        // Opening the bus gets at least a second even with a tiny --timeout, so that
        // `scan --timeout 0` still lists what BlueZ knows.
        let session = try await Session.open(timeout: max(timeout, .seconds(1)))
        let adapter = try Adapter.ready(in: session, named: global.adapter)
        return CommandContext(session: session, adapter: adapter, printer: Printer(format: global.format), deadline: deadline)
    }

    /// The device at `address`: known to BlueZ, or found by scanning within the deadline.
    func device(_ address: BluetoothAddress) async throws -> Device {
        try await Device.find(address, on: adapter, timeout: remaining)
    }
}
