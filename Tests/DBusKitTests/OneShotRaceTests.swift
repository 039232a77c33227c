import Testing
import Dispatch
import Foundation
import Synchronization
@testable import DBusKit
import SimulatorHarness

/// Reply, timeout and cancellation racing: exactly one outcome per operation, the one whose
/// source won, and nothing (continuation, timer) left registered afterwards.
final class Counters: Sendable {
    /// Per operation: whether a reply was arranged, whether its resolve() was the one taken
    /// (nil until offered), and the outcome the awaiting task saw.
    private let state: Lock<(arranged: [Bool], replyWon: [Bool?], outcome: [String?])>
    init(_ count: Int) {
        state = Lock(([Bool](repeating: false, count: count), [Bool?](repeating: nil, count: count),
                      [String?](repeating: nil, count: count)))
    }
    func arranged(_ index: Int) { state.withLock { $0.arranged[index] = true } }
    func replied(_ index: Int, won: Bool) { state.withLock { $0.replyWon[index] = won } }
    func record(_ index: Int, _ kind: String) { state.withLock { $0.outcome[index] = kind } }
    /// Replies arranged but not offered yet (a late one comes after the outcome).
    var repliesToCome: Int { state.withLock { s in s.arranged.indices.filter { s.arranged[$0] && s.replyWon[$0] == nil }.count } }
    var replyWon: [Bool?] { state.withLock { $0.replyWon } }
    var outcome: [String?] { state.withLock { $0.outcome } }
}

@Suite struct OneShotRaceTests {
    struct Reply: Error {}

    /// The shots of this test, weakly: one still alive at the end was leaked, or is held by
    /// a timer never cancelled (a timer's handler holds its shot). Counted per test, not
    /// process-wide: other suites run operations of their own meanwhile.
    final class Shots: Sendable {
        private final class Weak: @unchecked Sendable { weak var shot: OneShot<Int>? }
        private let shots = Lock<[Weak]>([])
        func add(_ shot: OneShot<Int>) {
            let weak = Weak()
            weak.shot = shot
            shots.withLock { $0.append(weak) }
        }
        var alive: Int { shots.withLock { $0.filter { $0.shot != nil }.count } }
    }

    @Test func tenThousandRacesHaveExactlyOneOutcomeEach() async throws {
        let operations = 10_000
        let shots = Shots()
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
                            shots.add(shot)
                            guard let replyDelay else { return }
                            outcomes.arranged(index)
                            if replyDelay == 0 { outcomes.replied(index, won: shot.resolve(.success(index))); return }
                            replyQueue.asyncAfter(deadline: .now() + .microseconds(replyDelay)) {
                                outcomes.replied(index, won: shot.resolve(.success(index)))
                            }
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
        // The outcome each task saw is the one its shot took: "reply" exactly when the
        // reply's resolve() won, a timeout or cancellation exactly when it lost or never came.
        // (A late reply is offered after the outcome: wait, bounded, for every one.)
        let offered = ContinuousClock.now + .seconds(20)
        while outcomes.repliesToCome > 0 && ContinuousClock.now < offered {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(outcomes.repliesToCome == 0)
        let replyWon = outcomes.replyWon
        let outcome = outcomes.outcome
        var mismatches: [String] = []
        for index in 0..<operations {
            guard let kind = outcome[index] else { mismatches.append("\(index): no outcome"); continue }
            switch (kind, replyWon[index]) {
            case ("reply", true?), ("timeout", false?), ("timeout", nil), ("cancelled", false?), ("cancelled", nil): break   // nil: no reply arranged
            default: mismatches.append("\(index): \(kind), reply won \(String(describing: replyWon[index]))")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        // With random timing each kind of outcome must have happened.
        let seen = Dictionary(outcome.compactMap { $0 }.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(seen["reply", default: 0] > 0)
        #expect(seen["timeout", default: 0] > 0)
        #expect(seen["cancelled", default: 0] > 0)
        // Every shot of this test gone (and so every timer, which holds its shot until it is
        // cancelled): waited for, bounded, as the last clean-ups finish on other threads.
        // (Before, the process-wide counters were compared with their values at the start,
        // and another suite's operation alive meanwhile failed the test.)
        #expect(await eventually(within: .seconds(20), every: .milliseconds(20)) { shots.alive == 0 }, "\(shots.alive) shots left")
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

    /// A task already cancelled when it calls withOneShot: CancellationError, and the
    /// operation is never started.
    @Test func cancellationBeforeStartNeverRunsTheOperation() async throws {
        let started = Atomic<Int>(0)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await withOneShot(timeout: .seconds(5)) { (shot: OneShot<Int>) in
                started.add(1, ordering: .relaxed)
                shot.succeed(1)
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(started.load(ordering: .relaxed) == 0)

        // The same operation, not cancelled: started once, and its value returned.
        let value = try await withOneShot(timeout: .seconds(5)) { (shot: OneShot<Int>) in
            started.add(1, ordering: .relaxed)
            shot.succeed(1)
        }
        #expect(value == 1)
        #expect(started.load(ordering: .relaxed) == 1)
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

/// What a resolver hands the awaiting task: memory written on the resolver's thread (as a
/// reply decoded on the D-Bus reader thread is) and read on the task's.
private final class HandedOver: Sendable {
    let value: Int
    init(value: Int) { self.value = value }
}

private final class RelaxedFlag: Sendable {
    let flag = Atomic<Bool>(false)
}

@Suite struct OneShotHandOffTests {
    /// A shot resolved on another thread before the awaiting task has suspended: Swift's
    /// runtime then continues the task without telling ThreadSanitizer that the resume came
    /// first, and the task's read of what the resolver made was reported as a data race
    /// (`make test-tsan` in CI, `WireBody.values`). withOneShot orders the task after the
    /// resolver. Meaningful under `make test-tsan` (halt_on_error: a race ends the run); the
    /// values are checked everywhere. The resolver signals the task through a relaxed atomic
    /// only, which orders nothing for the sanitizer.
    @Test func aValueResolvedBeforeTheTaskSuspendsIsOrderedBeforeItsRead() async throws {
        for round in 0..<20 {
            let resolved = RelaxedFlag()
            let handed = try await withOneShot { (shot: OneShot<HandedOver>) in
                Thread.detachNewThread {
                    shot.succeed(HandedOver(value: round))
                    resolved.flag.store(true, ordering: .relaxed)
                }
                // Still inside the continuation's closure: the task has not suspended.
                while !resolved.flag.load(ordering: .relaxed) { sched_yield() }
            }
            let value = handed.value   // read here: #expect's machinery takes locks first
            #expect(value == round)
        }
    }
}
