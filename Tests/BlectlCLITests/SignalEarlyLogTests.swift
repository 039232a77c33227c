import Synchronization
import Testing
@testable import BlectlCLI
#if canImport(Glibc)
import Glibc
#endif

/// The log of signals that come before Dispatch takes them (SignalHandling.EarlyLog): the
/// order they came in is the order they are handled, so that of two early signals the first
/// cancels and the second ends blectl by its number. Before the log, each early signal was
/// handled when its own source registered, in SignalHandling.handled's order: SIGTERM then
/// SIGINT ended blectl with 143 instead of 130 (found by review).
@Suite struct SignalEarlyLogTests {
    @Test func keepsArrivalOrder() {
        let log = Atomic<UInt64>(0)
        for sig in [SIGTERM, SIGINT, SIGHUP, SIGALRM] {
            let appended = SignalHandling.EarlyLog.append(sig, to: log)
            #expect(appended)
        }
        #expect(SignalHandling.EarlyLog.signals(in: log.load(ordering: .relaxed)) == [SIGTERM, SIGINT, SIGHUP, SIGALRM])
        #expect(SignalHandling.EarlyLog.signals(in: 0) == [])
    }

    @Test func closedRefusesAndFullDrops() {
        let log = Atomic<UInt64>(0)
        for i in 0..<13 {
            let appended = SignalHandling.EarlyLog.append(Int32(1 + i % 15), to: log)
            #expect(appended)
        }
        // Past the capacity: dropped, the first eleven kept.
        #expect(SignalHandling.EarlyLog.signals(in: log.load(ordering: .relaxed)) == (0..<11).map { Int32(1 + $0 % 15) })
        let held = log.exchange(SignalHandling.EarlyLog.closed, ordering: .sequentiallyConsistent)
        #expect(SignalHandling.EarlyLog.signals(in: held).count == 11)
        let appendedAfterClose = SignalHandling.EarlyLog.append(SIGINT, to: log)
        #expect(appendedAfterClose == false)
        #expect(SignalHandling.EarlyLog.signals(in: log.load(ordering: .relaxed)) == [])
    }

    /// The same signal again within the window is a repeat (GNU timeout(1) sends its signal
    /// twice); later, or another signal, is a second signal.
    @Test func theSameSignalSoonAfterTheFirstIsARepeat() {
        #expect(SignalHandling.sameSignalWindow == .milliseconds(200))
        #expect(SignalHandling.isRepeat(SIGINT, of: SIGINT, after: .zero))
        #expect(SignalHandling.isRepeat(SIGINT, of: SIGINT, after: .milliseconds(199)))
        #expect(!SignalHandling.isRepeat(SIGINT, of: SIGINT, after: .milliseconds(200)))
        #expect(!SignalHandling.isRepeat(SIGTERM, of: SIGINT, after: .zero))
        #expect(!SignalHandling.isRepeat(SIGINT, of: SIGTERM, after: .milliseconds(1)))
    }
}
