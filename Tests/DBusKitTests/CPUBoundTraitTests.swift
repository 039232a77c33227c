import SimulatorHarness
import Testing

/// The `.cpuBound` trait moves a suite's tests, sync and async, and their child tasks, off
/// the cooperative pool; without it a test runs on the pool.
@Suite(.cpuBound) struct CPUBoundTraitTests {
    @Test func aSyncTestRunsOnTheTraitsThreads() {
        #expect(CPUBoundExecutor.isCurrent)
    }

    @Test func anAsyncTestAndItsChildTasksRunOnTheTraitsThreads() async {
        #expect(CPUBoundExecutor.isCurrent)
        await Task.yield()
        #expect(CPUBoundExecutor.isCurrent)
        let child = await withTaskGroup(of: Bool.self) { group in
            group.addTask { CPUBoundExecutor.isCurrent }
            return await group.next() ?? false
        }
        #expect(child)
    }
}

@Suite struct WithoutCPUBoundTraitTests {
    @Test func aTestWithoutTheTraitRunsOnThePool() {
        #expect(!CPUBoundExecutor.isCurrent)
    }
}
