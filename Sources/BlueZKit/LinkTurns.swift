import DBusKit

/// The Connects of one session that wait for a free link (the controller out of links, see
/// `Device+LinkSlots.swift`), served one at a time in the order they came: the first to
/// have waited is the first to connect when a link goes down, so that none waits past its
/// timeout while later ones get through.
final class LinkTurns: Sendable {
    private struct State {
        var lastTicket: UInt64 = 0
        /// The ticket whose turn it is; nil when no one holds the turn.
        var holder: UInt64?
        var waiting: [(ticket: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Tickets cancelled before their waiter was in `waiting`.
        var cancelled: Set<UInt64> = []
    }

    private let state = Lock(State())

    /// Waits for the turn, behind those who asked before; release it with ``release()``.
    /// - Returns: true with the turn; false at `deadline` (without it).
    /// - Throws: `CancellationError`.
    func acquire(before deadline: ContinuousClock.Instant) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask { try await self.acquire(); return true }
            group.addTask { try await Task.sleep(until: deadline, clock: .continuous); return false }
            let first = try await group.next() ?? false
            group.cancelAll()
            // The turn may have come just as the deadline did: then it is given back.
            if !first, (try? await group.next()) == true { release() }
            return first
        }
    }

    /// Gives the turn to the next in line, if any.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.holder = nil
                return nil
            }
            let next = state.waiting.removeFirst()
            state.holder = next.ticket
            return next.continuation
        }
        next?.resume()
    }

    private func acquire() async throws {
        let ticket = state.withLock { state -> UInt64 in
            state.lastTicket += 1
            return state.lastTicket
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now: Bool? = state.withLock { state in
                    if state.cancelled.remove(ticket) != nil { return nil }
                    if state.holder == nil {
                        state.holder = ticket
                        return true
                    }
                    state.waiting.append((ticket, continuation))
                    return false
                }
                switch now {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) {
                    return state.waiting.remove(at: index).continuation
                }
                if state.holder != ticket { state.cancelled.insert(ticket) }
                return nil
            }
            waiting?.resume(throwing: CancellationError())
        }
    }
}
