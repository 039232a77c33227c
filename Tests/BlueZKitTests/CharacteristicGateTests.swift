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
    private let list = Lock<[String]>([])
    func append(_ s: String) { list.withLock { $0.append(s) } }
    var count: Int { list.withLock { $0.count } }
}

@Suite struct CharacteristicGateTests {
    let op = BLEOperation(.read, characteristic: .batteryLevel)

    @Test func oneOperationInFlightPerCharacteristic() async throws {
        let gate = CharacteristicGate()
        let a = InFlight(), b = InFlight()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                let (path, counter): (ObjectPath, InFlight) = i % 2 == 0 ? ("/c/a", a) : ("/c/b", b)
                group.addTask { [op] in
                    try await gate.run(path, operation: op, timeout: .seconds(10)) {
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
        #expect(a.state.withLock { $0.done } + b.state.withLock { $0.done } == 200)
    }

    @Test func waitersThatTimeOutOrAreCancelledNeverBlockTheGate() async throws {
        let gate = CharacteristicGate()
        let outcomes = Outcomes()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<300 {
                let task = Task { [op] in
                    try await gate.run("/c", operation: op, timeout: .microseconds(Int.random(in: 0...400))) {
                        try? await Task.sleep(for: .microseconds(50))
                    }
                }
                if i % 3 == 0 { task.cancel() }
                group.addTask {
                    let result = await task.result
                    outcomes.append((try? result.get()) != nil ? "ran" : "gave up")
                }
            }
            try await group.waitForAll()
        }
        #expect(outcomes.count == 300)
        // After every kind of giving up, the gate is free: the next operation runs at once.
        let ran = try await gate.run("/c", operation: op, timeout: .milliseconds(100)) { true }
        #expect(ran)
    }
}
