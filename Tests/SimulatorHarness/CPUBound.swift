// Only where Swift Testing is (the test builds): this target is built by `make build` too.
#if canImport(Testing)
import Dispatch
import Synchronization
import Testing

/// Runs a suite's tests on threads of their own instead of the cooperative pool: for the
/// suites that compute for seconds (random rounds, property checks, fuzzing) and never wait
/// for a bus or a process.
///
/// The test process shares one cooperative pool, as wide as the machine has cores (two in
/// CI). Two such suites running there at once hold every pool thread for as long as they
/// compute (20-30 s under ThreadSanitizer), and every other test waiting for a state then
/// waits that long: its hang guard may pass. On these threads they take their share of the
/// CPU beside the pool instead. The test's task is the same (a task executor preference,
/// SE-0417), so `#expect` and `#require` record as usual.
public struct CPUBoundTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(CPUBoundExecutor.shared) { try await function() }
    }
}

extension Trait where Self == CPUBoundTrait {
    /// See ``CPUBoundTrait``.
    public static var cpuBound: Self { CPUBoundTrait() }
}

/// Two serial dispatch queues (threads outside the cooperative pool), jobs handed to them in
/// turn: the CPU-bound suites use two cores' worth at most, so the pool keeps its share.
public final class CPUBoundExecutor: TaskExecutor {
    static let shared = CPUBoundExecutor()
    private static let key = DispatchSpecificKey<Bool>()
    private let queues: [DispatchQueue] = (1...2).map { index in
        let queue = DispatchQueue(label: "blectl.tests.cpu-bound.\(index)")
        queue.setSpecific(key: key, value: true)
        return queue
    }

    /// Whether the caller runs on one of these threads.
    public static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
    private let turn = Atomic<Int>(0)

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queue = queues[turn.wrappingAdd(1, ordering: .relaxed).oldValue & 1]
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
#endif
