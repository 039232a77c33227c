import Testing
import Synchronization
import DBusKit
@testable import BlueZKit

final class InFlight: Sendable {
    let state = Lock((now: 0, peak: 0, done: 0))
    func enter() { state.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) } }
    func leave() { state.withLock { $0.now -= 1; $0.done += 1 } }
}

final class Outcomes: Sendable {
    private let list = Lock<[String: Int]>([:])
    func record(_ s: String) { list.withLock { $0[s, default: 0] += 1 } }
    var counts: [String: Int] { list.withLock { $0 } }
}

/// A body that stays in flight until the test lets it finish.
final class Holder: Sendable {
    private let (enteredStream, enteredContinuation) = AsyncStream<Void>.makeStream()
    private let (releaseStream, releaseContinuation) = AsyncStream<Void>.makeStream()

    func body() async {
        enteredContinuation.yield()
        for await _ in releaseStream { break }
    }

    /// Returns once `body` runs.
    func entered() async {
        for await _ in enteredStream { break }
    }

    func release() { releaseContinuation.yield() }
}

@Suite struct CharacteristicGateTests {
    let op = BLEOperation(.read, characteristic: .batteryLevel)

    /// 100 operations queued on each of two characteristics: never two at once on one. The
    /// queued ones wait without a limit (each turn comes after up to 99 others, which on a
    /// loaded machine under a sanitizer takes longer than any fixed limit would allow);
    /// the time limit only stops a gate that lost a turn from hanging the run.
    @Test(.timeLimit(.minutes(2)))
    func oneOperationInFlightPerCharacteristic() async throws {
        let gate = CharacteristicGate()
        let a = InFlight(), b = InFlight()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                let (path, counter): (ObjectPath, InFlight) = i % 2 == 0 ? ("/c/a", a) : ("/c/b", b)
                group.addTask { [op] in
                    try await gate.run(path, operation: op, timeout: nil) {
                        counter.enter()
                        try await Task.sleep(for: .microseconds(Int.random(in: 0...300)))
                        counter.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(a.state.withLock { $0.peak } == 1)
        #expect(b.state.withLock { $0.peak } == 1)
        #expect(a.state.withLock { $0.done } == 100)
        #expect(b.state.withLock { $0.done } == 100)
    }

    /// Each way of giving up, deterministically: with the gate held, a waiter that times out
    /// gets `timedOut` naming the operation, a cancelled one `CancellationError`, neither
    /// runs; a patient waiter then gets the turn once the holder is done, and afterwards the
    /// gate is free.
    @Test func eachWayOfGivingUpLeavesTheTurnToTheNext() async throws {
        let gate = CharacteristicGate()
        let holder = Holder()
        let ran = InFlight()
        let holding = Task { [op] in try await gate.run("/c", operation: op, timeout: .zero) { await holder.body() } }
        await holder.entered()

        let timedOut = await Task { [op] in
            try await gate.run("/c", operation: op, timeout: .milliseconds(1)) { ran.enter(); ran.leave() }
        }.result
        #expect(throws: BLEError.timedOut(op)) { try timedOut.get() }

        let cancelled = Task { [op] in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await gate.run("/c", operation: op, timeout: nil) { ran.enter(); ran.leave() }
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }

        // Both left the queue as they gave up.
        #expect(gate.waitingCount(on: "/c") == 0)
        let patient = Task { [op] in try await gate.run("/c", operation: op, timeout: nil) { ran.enter(); ran.leave(); return true } }
        while gate.waitingCount(on: "/c") == 0 { await Task.yield() }
        holder.release()
        try await holding.value
        #expect(try await patient.value)
        #expect(ran.state.withLock { $0.done } == 1, "a waiter that gave up ran")
        let next = try await gate.run("/c", operation: op, timeout: .zero) { true }
        #expect(next)
    }

    /// 300 waiters with tiny limits, a third of them cancelled: each ends once, by running
    /// its body or by one of the two errors of giving up, and no body runs twice; after all
    /// that the gate is free: the next operation runs at once.
    @Test func waitersThatTimeOutOrAreCancelledNeverBlockTheGate() async throws {
        let gate = CharacteristicGate()
        let outcomes = Outcomes()
        let bodies = InFlight()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<300 {
                let task = Task { [op] in
                    try await gate.run("/c", operation: op, timeout: .microseconds(Int.random(in: 0...400))) {
                        bodies.enter()
                        try? await Task.sleep(for: .microseconds(50))
                        bodies.leave()
                    }
                }
                if i % 3 == 0 { task.cancel() }
                group.addTask { [op] in
                    switch await task.result {
                    case .success: outcomes.record("ran")
                    case .failure(let error as BLEError) where error == .timedOut(op): outcomes.record("timed out")
                    case .failure(is CancellationError): outcomes.record("cancelled")
                    case .failure(let error): outcomes.record("other: \(error)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let counts = outcomes.counts
        #expect(Set(counts.keys).isSubset(of: ["ran", "timed out", "cancelled"]), "\(counts)")
        #expect(counts.values.reduce(0, +) == 300)
        // The first to come finds the gate free: at least one ran.
        #expect(counts["ran", default: 0] >= 1, "\(counts)")
        // Exactly the operations reported as run ran their body, one at a time.
        #expect(bodies.state.withLock { $0.done } == counts["ran", default: 0])
        #expect(bodies.state.withLock { $0.peak } == 1)
        // After every kind of giving up, the gate is free: the next operation runs at once.
        let ran = try await gate.run("/c", operation: op, timeout: .zero) { true }
        #expect(ran)
    }
}
