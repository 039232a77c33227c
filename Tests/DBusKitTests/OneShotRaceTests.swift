import Testing
import Dispatch
import Synchronization
@testable import DBusKit

/// Reply, timeout and cancellation racing: exactly one outcome per operation, and nothing
/// (continuation, timer) left registered afterwards.
final class Counters: Sendable {
    private let state: Lock<(perOperation: [Int], kinds: [String: Int])>
    init(_ count: Int) { state = Lock(([Int](repeating: 0, count: count), [:])) }
    func record(_ index: Int, _ kind: String) {
        state.withLock { $0.perOperation[index] += 1; $0.kinds[kind, default: 0] += 1 }
    }
    var perOperation: [Int] { state.withLock { $0.perOperation } }
    var kinds: [String: Int] { state.withLock { $0.kinds } }
}

@Suite struct OneShotRaceTests {
    struct Reply: Error {}

    @Test func tenThousandRacesHaveExactlyOneOutcomeEach() async throws {
        let operations = 10_000
        let baselineShots = OperationMetrics.liveOneShots.load(ordering: .relaxed)
        let outcomes = Counters(operations)
        let replyQueue = DispatchQueue(label: "test.replies", attributes: .concurrent)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<operations {
                // Spread the three sources over 0-2 ms; some land at the same instant. One
                // operation in ten of each kind is arranged so that its source must win
                // (reply at once; no reply and no cancel; cancelled with no reply), so every
                // kind of outcome is seen however slow the machine (ThreadSanitizer).
                var replyDelay: Int? = Int.random(in: 0...2000)
                var timeout = Duration.microseconds(Int.random(in: 0...2000))
                var cancelDelay: Int? = Int.random(in: 0...2000)
                switch index % 10 {
                case 0: replyDelay = 0; timeout = .seconds(30); cancelDelay = nil
                case 1: replyDelay = nil; timeout = .zero; cancelDelay = nil
                case 2: replyDelay = nil; timeout = .seconds(30); cancelDelay = 0
                default: break
                }
                let task = Task { [replyDelay, timeout] in
                    do {
                        let value = try await withOneShot(timeout: timeout, timeoutError: { BusError.timedOut }) { (shot: OneShot<Int>) in
                            guard let replyDelay else { return }
                            if replyDelay == 0 { shot.succeed(index); return }
                            replyQueue.asyncAfter(deadline: .now() + .microseconds(replyDelay)) { shot.succeed(index) }
                        }
                        #expect(value == index)
                        return "reply"
                    } catch is CancellationError {
                        return "cancelled"
                    } catch BusError.timedOut {
                        return "timeout"
                    }
                }
                if let cancelDelay { replyQueue.asyncAfter(deadline: .now() + .microseconds(cancelDelay)) { task.cancel() } }
                group.addTask {
                    let kind = try await task.value
                    outcomes.record(index, kind)
                }
                if index % 500 == 499 { try await group.waitForAll() }
            }
            try await group.waitForAll()
        }
        #expect(outcomes.perOperation.allSatisfy { $0 == 1 })
        let seen = outcomes.kinds
        #expect(seen.values.reduce(0, +) == operations)
        // With random timing each kind of outcome must have happened.
        #expect(seen["reply", default: 0] > 0)
        #expect(seen["timeout", default: 0] > 0)
        #expect(seen["cancelled", default: 0] > 0)
        // The counter is process-wide and other suites may be running operations of their
        // own: wait (bounded) for every timer to be gone.
        let deadline = ContinuousClock.now + .seconds(20)
        while (OperationMetrics.liveTimers.load(ordering: .relaxed) != 0
               || OperationMetrics.liveOneShots.load(ordering: .relaxed) > baselineShots) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(OperationMetrics.liveTimers.load(ordering: .relaxed) == 0)
        #expect(OperationMetrics.liveOneShots.load(ordering: .relaxed) <= baselineShots)
    }

    @Test func allThreeAtOnceStillGiveOneOutcome() async throws {
        for _ in 0..<2_000 {
            let shot = OneShot<Int>()
            let wins = await withTaskGroup(of: Bool.self) { group in
                group.addTask { shot.resolve(.success(1)) }
                group.addTask { shot.resolve(.failure(BusError.timedOut)) }
                group.addTask { shot.resolve(.failure(CancellationError())) }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(wins == 1)
        }
    }

    @Test func cancellationBeforeStartNeverRunsTheOperation() async throws {
        let started = Atomic<Int>(0)
        let task = Task {
            try await withOneShot(timeout: .seconds(5)) { (shot: OneShot<Int>) in
                started.add(1, ordering: .relaxed)
                shot.succeed(1)
            }
        }
        task.cancel()
        let result = await task.result
        // Either the task was cancelled before it ran (no start) or it ran and won; never both.
        switch result {
        case .success(let value): #expect(value == 1); #expect(started.load(ordering: .relaxed) == 1)
        case .failure(let error): #expect(error is CancellationError); #expect(started.load(ordering: .relaxed) == 0)
        }
    }

    @Test func cleanupsRunExactlyOnceWhoeverWins() async throws {
        let cleaned = Atomic<Int>(0)
        for _ in 0..<1_000 {
            let shot = OneShot<Int>()
            shot.onFinish { cleaned.add(1, ordering: .relaxed) }
            shot.succeed(1)
            shot.fail(BusError.timedOut)
            shot.onFinish { cleaned.add(1, ordering: .relaxed) }  // registered late: runs at once
        }
        #expect(cleaned.load(ordering: .relaxed) == 2_000)
    }
}
