import Testing
@testable import DBusKit

/// `Lock` keeps its value in memory of its own (not a stored property, whose every access was
/// also checked for exclusivity at run time): what one call writes the next reads, and the
/// value is released with the lock (the first test fails when `deinit` does not deinitialize it).
@Suite struct LockTests {
    final class Tracked: @unchecked Sendable {
        var count = 0
    }

    @Test func theValueIsKeptAcrossCallsAndReleasedWithTheLock() {
        weak var gone: Tracked?
        do {
            let tracked = Tracked()
            gone = tracked
            let lock = Lock([tracked])
            lock.withLock { $0[0].count += 1; $0.append(Tracked()) }
            #expect(lock.withLock { $0.count } == 2)
            #expect(lock.withLock { $0[0].count } == 1)
            #expect(lock.withLockIfAvailable { $0.count } == 2)
        }
        // The lock and its value are gone: nothing kept the object.
        #expect(gone == nil)
    }

    @Test func aValueTypeIsReadBackAsWritten() {
        let lock = Lock((serial: UInt32(0), names: [String]()))
        for i in 1...100 { lock.withLock { $0.serial += 1; $0.names.append("n\(i)") } }
        #expect(lock.withLock { $0.serial } == 100)
        #expect(lock.withLock { $0.names.last } == "n100")
    }
}
