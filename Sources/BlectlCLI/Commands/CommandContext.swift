import BlueZKit

/// What every subcommand starts from: the session, the adapter, the printer, the deadline.
struct CommandContext: Sendable {
    let session: Session
    let printer: Printer
    /// When the whole command must be done (`--timeout` from the start).
    let deadline: ContinuousClock.Instant
    /// `--adapter`: the adapter asked for by name; nil for the default choice.
    let adapterName: String?
    /// The adapter chosen by the subcommand's ``AdapterRequirement``; nil for `.none`.
    private let chosenAdapter: Adapter?

    var remaining: Duration { max(.zero, deadline - .now) }

    /// The adapter the command works on, chosen as its ``BlectlSubcommand/adapterRequirement``
    /// says (powered for `.powered`, present for `.present`).
    /// - Throws: ``BLEError/unavailable(_:)`` `.noAdapter` for a command whose requirement is
    ///   `.none` (no adapter was chosen for it).
    var adapter: Adapter {
        get throws(BLEError) {
            guard let chosenAdapter else { throw BLEError.unavailable(.noAdapter(adapterName)) }
            return chosenAdapter
        }
    }

    /// Opens the session and picks the adapter `requirement` asks for, before `deadline`.
    /// - Throws: the errors of `Session.open` (69 no bluetoothd, 77, 124) and, for the
    ///   adapter, ``BLEError/unavailable(_:)`` `.noAdapter` or `.poweredOff`.
    /// `observer` sees the session's bus traffic and operations (the `-v` trace, the progress line).
    static func open(_ global: GlobalOptions, deadline: ContinuousClock.Instant, requirement: AdapterRequirement = .powered,
                     observer: (any SessionObserver)? = nil) async throws -> CommandContext {
        let timeout = deadline - .now
        // Opening the bus gets at least a second even with a tiny --timeout, so that
        // `scan --timeout 0` still lists what BlueZ knows.
        let session = try await Session.open(timeout: max(timeout, .seconds(1)), observer: observer)
        let adapter: Adapter?
        do {
            switch requirement {
            case .powered: adapter = try Adapter.ready(in: session, named: global.adapter)
            case .present: adapter = try Adapter.present(in: session, named: global.adapter)
            case .none: adapter = nil
            }
        } catch {
            session.close()
            throw error
        }
        return CommandContext(session: session, printer: Printer(format: global.format), deadline: deadline,
                              adapterName: global.adapter, chosenAdapter: adapter)
    }

    /// Finds the device at `address` (known to BlueZ, or by scanning), connects and resolves
    /// its services, runs `body`, and disconnects what it connected: all within the deadline.
    func withConnectedDevice<T: Sendable>(_ address: BluetoothAddress, _ body: (ConnectedDevice) async throws -> T) async throws -> T {
        let device = try await Device.find(address, on: try adapter, timeout: remaining)
        return try await device.withConnection(timeout: remaining, body)
    }
}
