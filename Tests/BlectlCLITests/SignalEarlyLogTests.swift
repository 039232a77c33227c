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
        let window = SignalHandling.defaultRepeatWindow
        #expect(window == .milliseconds(200))
        #expect(SignalHandling.isRepeat(SIGINT, of: SIGINT, after: .zero, window: window))
        #expect(SignalHandling.isRepeat(SIGINT, of: SIGINT, after: .milliseconds(199), window: window))
        #expect(!SignalHandling.isRepeat(SIGINT, of: SIGINT, after: .milliseconds(200), window: window))
        #expect(!SignalHandling.isRepeat(SIGTERM, of: SIGINT, after: .zero, window: window))
        #expect(!SignalHandling.isRepeat(SIGINT, of: SIGTERM, after: .milliseconds(1), window: window))
        // A window of 0: every second signal is one.
        #expect(!SignalHandling.isRepeat(SIGINT, of: SIGINT, after: .zero, window: .zero))
    }

    /// A SignalHandling made without a window reads BLECTL_SIGNAL_REPEAT_WINDOW, as blectl's
    /// main makes it (the end-to-end tests that set the variable rely on this). The variable
    /// is read only here in this process's tests.
    @Test func aSignalHandlingReadsTheVariableWhenMade() {
        let variable = SignalHandling.repeatWindowVariable
        let saved = getenv(variable).map { String(cString: $0) }
        defer { if let saved { setenv(variable, saved, 1) } else { unsetenv(variable) } }
        setenv(variable, "600", 1)
        #expect(SignalHandling().repeatWindow == .seconds(600))
        setenv(variable, "0", 1)
        #expect(SignalHandling().repeatWindow == .zero)
        setenv(variable, "inf", 1)
        #expect(SignalHandling().repeatWindow == .milliseconds(200))
        unsetenv(variable)
        #expect(SignalHandling().repeatWindow == .milliseconds(200))
    }

    /// BLECTL_SIGNAL_REPEAT_WINDOW: seconds as `--timeout` takes them; unset or refused, 200 ms.
    @Test func theRepeatWindowComesFromTheEnvironmentVariable() {
        #expect(SignalHandling.repeatWindowVariable == "BLECTL_SIGNAL_REPEAT_WINDOW")
        #expect(SignalHandling.repeatWindow(nil) == .milliseconds(200))
        #expect(SignalHandling.repeatWindow("0") == .zero)
        #expect(SignalHandling.repeatWindow("0.05") == .milliseconds(50))
        #expect(SignalHandling.repeatWindow("600") == .seconds(600))
        for refused in ["", "-1", "abc", "1e3", "86401", "inf"] {
            #expect(SignalHandling.repeatWindow(refused) == .milliseconds(200), "\(refused)")
        }
    }
}
