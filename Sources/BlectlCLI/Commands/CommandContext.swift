import BlueZKit

/// What every subcommand starts from: the session, the adapter, the printer, the deadline.
struct CommandContext: Sendable {
    let session: Session
    let printer: Printer
    /// When the whole command must be done (`--timeout` from the start); in a run over
    /// several devices, when the device at hand must be done.
    let deadline: ContinuousClock.Instant
    /// `--adapter`: the adapter asked for by name; nil for the default choice.
    let adapterName: String?
    /// The adapter chosen by the subcommand's ``AdapterRequirement``; nil for `.none`.
    private let chosenAdapter: Adapter?
    /// What the command asked of the adapter.
    private let requirement: AdapterRequirement
    /// `--retries` of the commands that connect to a device (``withConnectedDevice(_:_:)``).
    let retryPolicy: RetryPolicy

    var remaining: Duration { max(.zero, deadline - .now) }

    /// The adapter the command works on, chosen as its ``BlectlSubcommand/adapterRequirement``
    /// says (powered for `.powered`, present for `.present`).
    /// - Throws: ``BLEError/unavailable(_:during:dbusError:)`` `.noAdapter` for a command whose
    ///   requirement is `.none` (no adapter was chosen for it).
    var adapter: Adapter {
        get throws(BLEError) {
            guard let chosenAdapter else { throw BLEError.unavailable(.noAdapter(adapterName), during: BLEOperation(.adapter)) }
            return chosenAdapter
        }
    }

    /// How long opening the bus may take when `--timeout` is 0 (`scan`, `info`, `devices`,
    /// `adapters`: 0 means "wait for nothing, look at what BlueZ has"; every other command
    /// refuses 0). A positive `--timeout` bounds the bus set-up like every other stage.
    static let zeroTimeoutBusLimit: Duration = .seconds(1)

    /// Opens the session and picks the adapter `requirement` asks for, before `deadline`.
    /// - Throws: the errors of `Session.open` (69 no bus, no bluetoothd; 77; 124, stage `bus`)
    ///   and, for the adapter, ``BLEError/unavailable(_:during:dbusError:)`` `.noAdapter`,
    ///   `.poweredOff` or `.blocked`, or 124 for one still powering on at the deadline
    ///   (stage `adapter`).
    /// `observer` sees the session's bus traffic and operations (the `-v` trace, the progress line);
    /// `opening`, the session begun at start (``Blectl``), if one was (its observer is the one
    /// it was made with).
    static func open(_ global: GlobalOptions, deadline: ContinuousClock.Instant, requirement: AdapterRequirement = .powered,
                     retryPolicy: RetryPolicy = RetryPolicy(retries: 0),
                     observer: (any SessionObserver)? = nil, opening: Session.Opening? = nil) async throws -> CommandContext {
        let remaining = max(.zero, deadline - .now)
        let limit = remaining == .zero ? zeroTimeoutBusLimit : remaining
        let session = if let opening {
            try await Session.open(opening, timeout: limit)
        } else {
            try await Session.open(timeout: limit, observer: observer)
        }
        let adapter: Adapter?
        do {
            switch requirement {
            case .powered: adapter = try await Adapter.ready(in: session, named: global.adapter, timeout: max(.zero, deadline - .now))
            case .present: adapter = try Adapter.present(in: session, named: global.adapter)
            case .none: adapter = nil
            }
        } catch {
            session.close()
            throw error
        }
        return CommandContext(session: session, printer: Printer(format: global.format), deadline: deadline,
                              adapterName: global.adapter, chosenAdapter: adapter, requirement: requirement, retryPolicy: retryPolicy)
    }

    /// The same session, adapter and printer with another deadline: one device's own, in a
    /// run over several (``FleetRun``).
    func until(_ deadline: ContinuousClock.Instant) -> CommandContext {
        CommandContext(session: session, printer: printer, deadline: deadline, adapterName: adapterName,
                       chosenAdapter: chosenAdapter, requirement: requirement, retryPolicy: retryPolicy)
    }

    /// `error` as blectl reports it: a failure that coincides with Bluetooth going away
    /// (bluetoothd leaving, the adapter powered off, blocked by rfkill or removed; bluetoothd
    /// drops links and fails the calls in flight before it says so) is that unavailability
    /// (69), naming the stage that failed and keeping BlueZ's error name, wherever it
    /// happened: discovery, connect, a read, a write, notifications, pairing.
    ///
    /// Failures that such an event causes (`org.bluez.Error.Failed`, a lost link, busy) wait
    /// up to ``Adapter/linkLossGrace`` for it, within the deadline; the others only look at
    /// the adapter as it is, and so do all with `lookingOnlyNow` (a failure already some time
    /// past: the pause before a retry). Only for commands that needed a powered adapter.
    func refined(_ error: any Error, lookingOnlyNow: Bool = false) async -> any Error {
        guard let chosenAdapter, requirement == .powered, !Task.isCancelled,
              let bleError = error as? BLEError else { return error }
        let grace: Duration
        switch bleError {
        case .unavailable, .permissionDenied: return error
        case _ where lookingOnlyNow: grace = .zero
        // Within the deadline: the grace never makes the command overrun its --timeout.
        case .failed, .disconnected, .busy, .protocolError, .outcomeUnknown, .released: grace = min(Adapter.linkLossGrace, remaining)
        // A scan that ended without the device already failed with the adapter going away.
        case .deviceNotFound, .timedOut, .notSupported, .notPermitted, .serviceReadOnly, .authenticationFailed, .deviceProtocolError,
             .advertisementRejected:
            grace = .zero
        }
        guard case .unavailable(let why, _, let name)? = await chosenAdapter.unavailabilityAfterLinkLoss(within: grace) else { return error }
        let stage = bleError.operation ?? bleError.deviceNotFoundAddress.map { BLEOperation(.deviceLookup, address: $0) }
        return BLEError.unavailable(why, during: stage, dbusError: name ?? bleError.dbusError)
    }

    /// How long a one-shot command waits for BlueZ's answer to the Disconnect of a link it
    /// made: not at all. The result is printed by then; the Disconnect is sent and flushed to
    /// the bus, and blectl exits. bluetoothd completes a Disconnect whose caller has left the
    /// bus: the link stays up for its 2 s disconnect timer (a command run meanwhile reads
    /// over it, and leaves it to BlueZ), then goes down. Waiting cost every command 2 s.
    static let disconnectWait: Duration = .zero

    /// Finds the device at `address` (known to BlueZ, or by scanning), connects and resolves
    /// its services, runs `body`, and disconnects what it connected without waiting for the
    /// answer (``disconnectWait``): all within the deadline. A retryable failure of any of
    /// it (`body` included) is tried again as ``retryPolicy`` says (`--retries`), from the
    /// search for the device on, each attempt cleaned up before the next.
    func withConnectedDevice<T: Sendable>(_ address: BluetoothAddress, _ body: (ConnectedDevice) async throws -> T) async throws -> T {
        try await retryPolicy.run(until: deadline, stillThere: { await refined($0, lookingOnlyNow: true) }) {
            let device = try await Device.find(address, on: try adapter, timeout: remaining)
            return try await device.withConnection(timeout: remaining, disconnectTimeout: Self.disconnectWait, body)
        }
    }
}
