import DBusKit

/// How long clean-up after an interrupted operation (StopDiscovery, Disconnect, StopNotify)
/// may take of our own time.
package enum CleanupPolicy {
    package static let interruptedTimeout: Duration = .milliseconds(400)
    /// How long clean-up waits for the reply to a start call (StartDiscovery, StartNotify)
    /// still pending when the operation was interrupted, so that the matching stop follows a
    /// start that succeeded: BlueZ answers the stop with InProgress while the start is pending
    /// (bluez/src/adapter.c stop_discovery), so it cannot be sent earlier. Closing the bus
    /// connection ends whatever is still left after that.
    package static let pendingStartTimeout: Duration = .seconds(2)
    /// How long a StartDiscovery may stay unanswered once the adapter is discovering before
    /// the scan goes on without its reply. BlueZ 5.66 keeps one pending start per adapter
    /// (bluez/src/adapter.c start_discovery: `adapter->client`): when two clients start
    /// discovery at once, the first one's StartDiscovery is never answered, although its
    /// session is registered and the adapter discovers for it (seen with two `blectl scan`
    /// started together on a real bluetoothd). An answered start is answered within
    /// milliseconds of the Discovering change (both follow the kernel's start), so half a
    /// second is plenty; a reply that still comes later is waited for at the end and the
    /// StopDiscovery sent.
    package static let unansweredStartGrace: Duration = .milliseconds(500)

    /// How long past its end a clean-up step may still wait: at most the instant the
    /// command must have ended by (``CommandDeadline``), never past it.
    package static let wireTime: Duration = .milliseconds(50)
    /// How long a start call (StartDiscovery) waits for its reply, whatever the limit of the
    /// caller waiting for it: libdbus's default reply timeout. A reply that comes after the
    /// caller gave up still counts, so that the stop follows a start that succeeded late
    /// (a reply dropped at the caller's limit would leave bluetoothd discovering for us).
    package static let startReplyTimeout: Duration = .seconds(25)

    /// `limit`, cut to what is left before ``CommandDeadline/instant`` when one is set (zero
    /// once it has passed: clean-up then only puts its calls on the wire).
    package static func budget(_ limit: Duration) -> Duration {
        guard let deadline = CommandDeadline.instant else { return limit }
        return max(.zero, min(limit, deadline - .now))
    }
}

/// The instant by which the running command must have ended, clean-up included: a
/// task-local, set around a whole command (`CommandDeadline.$instant.withValue(deadline)`),
/// inherited by the clean-up tasks. Clean-up waits (the reply to a pending start, to
/// StopDiscovery, StopNotify or Disconnect) are cut to it; past it, clean-up only puts
/// Disconnect on the wire, and leaves discovery and notification sessions to end with the
/// bus connection (bluetoothd ends a client's sessions when it leaves the bus).
package enum CommandDeadline {
    @TaskLocal package static var instant: ContinuousClock.Instant?
}

/// Runs clean-up in a task of its own, so it completes even when the caller was cancelled
/// (clean-up awaited inside a cancelled task would fail at once).
func runCleanup<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T {
    await Task { await work() }.value
}
