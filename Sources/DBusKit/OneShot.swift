import Dispatch
import Synchronization

/// Exactly one outcome for an operation that several sources race to finish: a reply, a
/// timer, task cancellation, a disconnection.
///
/// The first ``resolve(_:)`` wins and returns `true`; later ones return `false` and are
/// dropped. When the outcome is decided, every clean-up registered with ``onFinish(_:)``
/// runs once (a timer cancelled, a reply handler removed), then the waiting task resumes.
/// Clean-ups and the resumption run outside the lock.
package final class OneShot<Success: Sendable>: Sendable {
    private enum State {
        /// Not decided; the awaiting continuation once installed.
        case waiting(CheckedContinuation<Success, any Error>?, [@Sendable () -> Void])
        /// Decided before the continuation was installed (cancelled before start).
        case decidedEarly(Result<Success, any Error>)
        case finished
    }

    private let state: Lock<State>

    package init() {
        state = Lock(.waiting(nil, []))
    }

    /// Whether an outcome has been decided.
    package var isResolved: Bool {
        state.withLock { if case .waiting = $0 { false } else { true } }
    }

    /// Offers an outcome; returns whether it was the one taken.
    @discardableResult
    package func resolve(_ result: Result<Success, any Error>) -> Bool {
        let action: (CheckedContinuation<Success, any Error>?, [@Sendable () -> Void])? = state.withLock { state in
            guard case .waiting(let continuation, let cleanups) = state else { return nil }
            state = continuation == nil ? .decidedEarly(result) : .finished
            return (continuation, cleanups)
        }
        guard let (continuation, cleanups) = action else { return false }
        for cleanup in cleanups { cleanup() }
        continuation?.resume(with: result)
        return true
    }

    package func succeed(_ value: Success) { resolve(.success(value)) }
    package func fail(_ error: any Error) { resolve(.failure(error)) }

    /// Orders the caller after the resolving thread (``Lock/synchronize()``): called by the
    /// awaiting task once it has resumed.
    fileprivate func synchronize() { state.synchronize() }

    /// Registers a clean-up to run once when the outcome is decided; runs it now if it already is.
    package func onFinish(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard case .waiting(let continuation, var cleanups) = state else { return true }
            cleanups.append(cleanup)
            state = .waiting(continuation, cleanups)
            return false
        }
        if runNow { cleanup() }
    }

    fileprivate func install(_ continuation: CheckedContinuation<Success, any Error>) {
        let early: Result<Success, any Error>? = state.withLock { state in
            switch state {
            case .waiting(_, let cleanups):
                state = .waiting(continuation, cleanups)
                return nil
            case .decidedEarly(let result):
                state = .finished
                return result
            case .finished:
                preconditionFailure("OneShot awaited twice")
            }
        }
        if let early { continuation.resume(with: early) }
    }
}

/// Runs an operation started by `start` until the first of: `start`'s sources resolve the
/// shot, `timeout` elapses (the error from `timeoutError`), or the task is cancelled
/// (`CancellationError`).
///
/// - Parameters:
///   - timeout: how long to wait; nil waits without a limit.
///   - timeoutError: the error thrown at the timeout (say which operation timed out).
///   - start: begins the work and arranges for it to resolve the shot; it is not called when
///     the task was already cancelled. Register clean-ups on the shot with `onFinish`.
/// - Returns: the value the winning source resolved with.
/// - Throws: the winning source's error, `timeoutError()`, or `CancellationError`.
package func withOneShot<Success: Sendable>(
    timeout: Duration? = nil,
    timeoutError: @escaping @Sendable () -> any Error = { BusError.timedOut },
    _ start: (OneShot<Success>) -> Void
) async throws -> Success {
    let shot = OneShot<Success>()
    // The resolver held the shot's lock before resuming: ordered after it (Lock.synchronize).
    defer { shot.synchronize() }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Success, any Error>) in
            shot.install(continuation)
            guard !shot.isResolved else { return }
            if let timeout {
                let timer = OneShotTimer.schedule(after: timeout) { shot.fail(timeoutError()) }
                shot.onFinish { timer.cancel() }
            }
            start(shot)
        }
    } onCancel: {
        shot.fail(CancellationError())
    }
}

/// A one-off Dispatch timer on a shared queue.
/// `@unchecked`: Dispatch sources are thread-safe; `cancel` is guarded by an atomic flag.
package final class OneShotTimer: @unchecked Sendable {
    private static let queue = DispatchQueue(label: "blectl.timers")
    private let source: any DispatchSourceTimer
    private let cancelled = Atomic<Bool>(false)

    private init(source: any DispatchSourceTimer) { self.source = source }

    package static func schedule(after delay: Duration, _ fire: @escaping @Sendable () -> Void) -> OneShotTimer {
        let source = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = delay.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanoseconds.overflow ? Int64.max : nanoseconds.partialValue.addingReportingOverflow(delay.components.attoseconds / 1_000_000_000).partialValue
        let deadline = total >= Int64(Int.max / 2) ? DispatchTime.distantFuture : DispatchTime.now() + .nanoseconds(Int(max(0, total)))
        source.schedule(deadline: deadline, repeating: .never, leeway: .milliseconds(1))
        source.setEventHandler(handler: fire)
        source.activate()
        return OneShotTimer(source: source)
    }

    /// Stops the timer; its handler will not run afterwards (unless already running).
    package func cancel() {
        guard !cancelled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        source.cancel()
    }
}
