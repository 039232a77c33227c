import BlueZKit

/// `--retries N`: which failures blectl tries again, how long it pauses first, and the loop,
/// for the commands that connect to a device (``CommandContext/withConnectedDevice(_:_:)``).
///
/// What is worth trying again is BlueZKit's knowledge (``BLEError/transience``, after
/// bleak-retry-connector's classes and BlueZ's reasons); what blectl does with it is here:
/// it never repeats a write that may have reached the device, and every retry fits in the
/// device's `--timeout`.
struct RetryPolicy: Sendable, Equatable {
    /// How many times a retryable failure is tried again (`--retries`; 0: never).
    var retries: Int

    /// The pause before the first retry, doubled for each one after it up to
    /// ``maximumDelay``: 0.25 s, 0.5 s, 1 s, 2 s, 2 s, ... (bleak-retry-connector pauses
    /// 0.25 s after a transient failure, so that the failed attempt's clean-up has run).
    static let initialDelay: Duration = .milliseconds(250)
    static let maximumDelay: Duration = .seconds(2)
    /// The pause after a controller out of links (``BLEError/Transience/outOfSlots``), at
    /// least: BlueZ keeps an idle link up for its 2 s disconnect timer before it frees it.
    static let outOfSlotsDelay: Duration = .seconds(2)
    /// How much of `--timeout` must be left after a pause for a retry to start; with less,
    /// the failure is reported as it is (a retry would only end in a timeout).
    static let minimumAttemptTime: Duration = .milliseconds(500)

    /// The pause before retry `retry` (from 1) after `error`.
    static func delay(beforeRetry retry: Int, after error: BLEError) -> Duration {
        let doubling = min(maximumDelay, initialDelay * (1 << min(max(retry - 1, 0), 8)))
        return error.transience == .outOfSlots ? max(doubling, outOfSlotsDelay) : doubling
    }

    /// Whether blectl tries `error` again with `--retries`, and what the error object's
    /// `retryable` says: a failure BlueZKit calls transient (``BLEError/isTransient``), unless
    /// it happened during a write or the wait for the answer to one (the device may have taken
    /// the write, and a command written twice may act twice; with `write --file`, earlier
    /// pieces were written). Errors of blectl's own (usage, output) never are.
    static func isRetryable(_ error: any Error) -> Bool {
        if let failure = error as? FleetFailure { return failure.isRetryable }
        guard let error = error as? BLEError, error.isTransient else { return false }
        switch error.operation?.kind {
        case .write?, .response?: return false
        default: return true
        }
    }

    /// Runs `attempt`; while it fails with a retryable error and retries are left, pauses
    /// (``delay(beforeRetry:after:)``) and runs it again. A retry starts only when the pause
    /// and ``minimumAttemptTime`` fit before `deadline`, and not once the task is cancelled.
    /// Each attempt cleans up after itself (``Device/withConnection(timeout:disconnectTimeout:isolation:_:)``
    /// disconnects what it connected before it throws).
    /// - Parameters:
    ///   - stillThere: after a pause, the failure as blectl reports it when Bluetooth went
    ///     away meanwhile (``CommandContext/refined(_:lookingOnlyNow:)``): such a failure
    ///     (no longer retryable) ends the loop.
    /// - Throws: the last attempt's error; `CancellationError` when cancelled during a pause.
    func run<T: Sendable>(until deadline: ContinuousClock.Instant, stillThere: (any Error) async -> any Error,
                          _ attempt: () async throws -> T) async throws -> T {
        var retried = 0
        while true {
            do {
                return try await attempt()
            } catch {
                guard retried < retries, !Task.isCancelled, Self.isRetryable(error), let bleError = error as? BLEError else { throw error }
                retried += 1
                let pause = Self.delay(beforeRetry: retried, after: bleError)
                guard deadline - .now >= pause + Self.minimumAttemptTime else { throw error }
                // On a terminal, the progress line says so during the pause.
                StatusLine.shared.show("pausing after a transient failure", detail: "retry \(retried) of \(retries)")
                try await Task.sleep(for: pause)
                let refined = await stillThere(error)
                guard Self.isRetryable(refined) else { throw refined }
            }
        }
    }
}
