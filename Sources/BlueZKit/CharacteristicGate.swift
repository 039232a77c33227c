import DBusKit
import Synchronization

/// One GATT operation in flight per characteristic: later ones wait their turn, first come
/// first served, each within its own timeout and cancellable while waiting.
final class CharacteristicGate: Sendable {
    private struct State {
        var busy: Set<ObjectPath> = []
        var waiting: [ObjectPath: [OneShot<Void>]] = [:]
    }
    private let state = Lock(State())

    /// Runs `body` once no other operation on `path` is in flight.
    /// - Parameters:
    ///   - timeout: how long to wait for the turn; nil waits without a limit.
    /// - Throws: ``BLEError/timedOut(_:)`` naming `operation` when the turn does not come
    ///   within `timeout`, `CancellationError`, what `body` throws.
    func run<T>(_ path: ObjectPath, operation: BLEOperation, timeout: Duration?, _ body: () async throws -> T) async throws -> T {
        let shot = OneShot<Void>()
        let mustWait = state.withLock { state -> Bool in
            if state.busy.insert(path).inserted { return false }
            state.waiting[path, default: []].append(shot)
            return true
        }
        if mustWait {
            do {
                try await withOneShot(timeout: timeout, timeoutError: { BLEError.timedOut(operation) }) { (turn: OneShot<Void>) in
                    shot.onFinish { turn.succeed(()) }
                }
            } catch {
                if shot.resolve(.failure(CancellationError())) {
                    // Withdrawn before our turn came: leave the queue.
                    state.withLock { $0.waiting[path]?.removeAll { $0 === shot } }
                } else {
                    // The turn was handed to us as we gave up: pass it on.
                    release(path)
                }
                throw error
            }
        }
        defer { release(path) }
        return try await body()
    }

    /// Operations waiting for their turn on `path` (for tests: one that gave up has left).
    func waitingCount(on path: ObjectPath) -> Int {
        state.withLock { $0.waiting[path]?.count ?? 0 }
    }

    private func release(_ path: ObjectPath) {
        while true {
            let next: OneShot<Void>? = state.withLock { state in
                guard var queue = state.waiting[path], !queue.isEmpty else {
                    state.busy.remove(path)
                    state.waiting[path] = nil
                    return nil
                }
                let first = queue.removeFirst()
                state.waiting[path] = queue.isEmpty ? nil : queue
                return first
            }
            guard let next else { return }
            if next.resolve(.success(())) { return }  // handed over; else it gave up: try the next
        }
    }
}
