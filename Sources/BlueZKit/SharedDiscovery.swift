import DBusKit

/// The discoveries of one session, one per adapter, shared by the session's users.
///
/// bluetoothd keeps one discovery and one filter per D-Bus client (bluez/src/adapter.c:
/// StartDiscovery from a client already discovering is answered `org.bluez.Error.InProgress`,
/// and SetDiscoveryFilter replaces the client's filter). So the users of one session
/// (concurrent ``Device/find(_:on:timeout:)`` calls, scans) share one discovery per adapter:
/// the first user sets the filter and starts it, a user joining later widens the filter
/// when it needs more (``DiscoveryFilter/Sent/merged(with:)``, as bluetoothd merges its
/// clients' filters), and the last user to leave stops it. A discovery starting while the
/// previous one is still stopping waits for that stop (bluetoothd answers StartDiscovery
/// InProgress until it completes).
final class SharedDiscoveries: Sendable {
    /// One adapter's discovery run: from the StartDiscovery of its first user to the
    /// StopDiscovery of its last.
    struct Run: Sendable {
        let id: UInt64
        /// SetDiscoveryFilter then StartDiscovery (after the previous run's stop).
        let start: Task<Void, any Error>
        /// How the start ended, set by its task as it ends (nil until then).
        let startOutcome: Lock<Result<Void, any Error>?>
        var users = 1
        /// The filter as last asked of bluetoothd (or being asked).
        var filter: DiscoveryFilter.Sent
        /// The last filter change queued after the start; the stop goes after it.
        var lastUpdate: Task<Void, any Error>?
    }

    /// A user's place in a run, from ``join(_:on:filter:setupTimeout:)`` to ``leave(_:on:waitingForStartUpTo:)``.
    struct Membership: Sendable {
        let adapter: ObjectPath
        let run: UInt64
        /// The run's start, shared by its users.
        let start: Task<Void, any Error>
        /// The filter change this user's joining asked for, if it widened the filter.
        let filterUpdate: Task<Void, any Error>?
    }

    private struct State {
        var runs: [ObjectPath: Run] = [:]
        /// Per adapter, the stop of the last run that ended (the next start waits for it).
        var stops: [ObjectPath: Task<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Lock(State())

    /// Joins the adapter's running discovery, or begins one, for a user with `filter`.
    /// A run whose start failed is not joined: a new one begins.
    func join(_ adapter: ObjectPath, on session: Session, filter: DiscoveryFilter, setupTimeout: Duration) -> Membership {
        let wanted = filter.sent
        return state.withLock { state in
            if var run = state.runs[adapter] {
                run.users += 1
                var update: Task<Void, any Error>?
                let merged = run.filter.merged(with: wanted)
                if merged != run.filter {
                    run.filter = merged
                    update = Self.setFilterTask(adapter, on: session, merged, after: run.lastUpdate ?? run.start, setupTimeout: setupTimeout)
                    run.lastUpdate = update
                }
                state.runs[adapter] = run
                return Membership(adapter: adapter, run: run.id, start: run.start, filterUpdate: update)
            }
            state.nextID += 1
            let id = state.nextID
            let outcome = Lock<Result<Void, any Error>?>(nil)
            let start = startTask(adapter, on: session, wanted, id: id, after: state.stops[adapter], recordingIn: outcome,
                                  setupTimeout: setupTimeout)
            state.runs[adapter] = Run(id: id, start: start, startOutcome: outcome, filter: wanted)
            return Membership(adapter: adapter, run: id, start: start, filterUpdate: nil)
        }
    }

    /// Leaves the run; the last user out stops it: once its start has succeeded and its last
    /// filter change is done (waited for up to ``CleanupPolicy/interruptedTimeout``), sends
    /// StopDiscovery (waiting up to ``CleanupPolicy/interruptedTimeout`` for the reply). Its
    /// errors (NotReady, "No discovery started", InProgress) are dropped. Nothing is stopped
    /// when the start failed.
    ///
    /// The leaver waits for the start up to `startWait`, then for the stop. A start still
    /// unanswered then is not given up: the stop follows it whenever it succeeds (bounded by
    /// the start's own call timeouts), so that no discovery is left running for the session,
    /// and the adapter's next run waits for that stop.
    /// - Returns: the start's failure, or the failure to see it end within `startWait`
    ///   (the last user only).
    func leave(_ membership: Membership, on session: Session, waitingForStartUpTo startWait: Duration) async -> (any Error)? {
        let adapter = membership.adapter
        let ended: (start: Task<Void, any Error>, outcome: Lock<Result<Void, any Error>?>, stop: Task<Void, Never>)? = state.withLock { state in
            guard var run = state.runs[adapter], run.id == membership.run else { return nil }
            run.users -= 1
            guard run.users == 0 else {
                state.runs[adapter] = run
                return nil
            }
            state.runs[adapter] = nil
            let start = run.start
            let lastUpdate = run.lastUpdate
            // Not a child of the leaver's task: the stop is clean-up, and may outlive the wait.
            let stop = Task {
                guard case .success = await start.result else { return }
                if let lastUpdate { _ = try? await awaitCancellable(lastUpdate, timeout: CleanupPolicy.budget(CleanupPolicy.interruptedTimeout)) }
                await session.sendAsCleanup(BlueZ.call(adapter, BlueZ.adapterInterface, "StopDiscovery"),
                                            waitingUpTo: CleanupPolicy.interruptedTimeout)
            }
            state.stops[adapter] = stop
            return (start, run.startOutcome, stop)
        }
        guard let ended else { return nil }
        // A start that has ended is known at once from what its task recorded, rather than
        // from a wait for the task that a timer may win on a loaded machine.
        switch ended.outcome.withLock({ $0 }) {
        case .failure(let error)?:
            return error
        case .success?:
            break
        case nil:
            // Waited for even when the leaver was cancelled: clean-up.
            let startFailure: (any Error)? = await runCleanup {
                do {
                    try await awaitCancellable(ended.start, timeout: startWait)
                    return nil
                } catch {
                    return error
                }
            }
            if let startFailure { return startFailure }
        }
        await ended.stop.value
        state.withLock { state in
            if state.stops[adapter] == ended.stop { state.stops[adapter] = nil }
        }
        return nil
    }

    /// The number of users of the adapter's running discovery (0: none running).
    func users(of adapter: ObjectPath) -> Int {
        state.withLock { $0.runs[adapter]?.users ?? 0 }
    }

    /// SetDiscoveryFilter and StartDiscovery, after `previousStop` (an `org.bluez.Error.InProgress`
    /// answer to StartDiscovery is retried once after 200 ms). A failure ends the run for
    /// users joining later. Not a child of any user's task: its reply must be seen even when
    /// they are cancelled, so that StopDiscovery follows a StartDiscovery that succeeded; for
    /// the same reason StartDiscovery waits ``CleanupPolicy/startReplyTimeout`` for its reply
    /// when `setupTimeout` (the users' own limit, which they keep) is shorter.
    private func startTask(_ adapter: ObjectPath, on session: Session, _ filter: DiscoveryFilter.Sent, id: UInt64, after previousStop: Task<Void, Never>?,
                           recordingIn outcome: Lock<Result<Void, any Error>?>, setupTimeout: Duration) -> Task<Void, any Error> {
        let operation = BLEOperation(.discovery)
        let replyTimeout = max(setupTimeout, CleanupPolicy.startReplyTimeout)
        return Task { [weak self] in
            await previousStop?.value
            do {
                _ = try await session.call(BlueZ.call(adapter, BlueZ.adapterInterface, "SetDiscoveryFilter", [filter.dbusValue]),
                                           operation: operation, timeout: setupTimeout)
                do {
                    _ = try await session.call(BlueZ.call(adapter, BlueZ.adapterInterface, "StartDiscovery"), operation: operation, timeout: replyTimeout)
                } catch BLEError.busy {
                    try await Task.sleep(for: .milliseconds(200))
                    do {
                        _ = try await session.call(BlueZ.call(adapter, BlueZ.adapterInterface, "StartDiscovery"), operation: operation, timeout: replyTimeout)
                    } catch BLEError.busy(let op, let name, let message) {
                        throw BLEError.busy(op, dbusError: name, message: "adapter busy: discovery could not start (\(message))")
                    }
                }
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
                // Users joining from now on begin a new run; those already in get the failure.
                self?.state.withLock { state in
                    if state.runs[adapter]?.id == id { state.runs[adapter] = nil }
                }
                throw error
            }
        }
    }

    /// SetDiscoveryFilter with the widened `filter`, once `previous` (the start, or the filter
    /// change before) has succeeded. bluetoothd applies a discovering client's new filter at
    /// once (update_discovery_filter).
    private static func setFilterTask(_ adapter: ObjectPath, on session: Session, _ filter: DiscoveryFilter.Sent,
                                      after previous: Task<Void, any Error>, setupTimeout: Duration) -> Task<Void, any Error> {
        return Task {
            try await previous.value
            _ = try await session.call(BlueZ.call(adapter, BlueZ.adapterInterface, "SetDiscoveryFilter", [filter.dbusValue]),
                                       operation: BLEOperation(.discovery), timeout: setupTimeout)
        }
    }
}
