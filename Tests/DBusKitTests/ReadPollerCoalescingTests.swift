import Testing
@testable import DBusKit

/// When the reading thread waits before polling again (``ReadPoller/Coalescing``): only in a
/// dense stream (data came within the window), and never while a reply is awaited.
struct ReadPollerCoalescingTests {
    private let window = Duration.microseconds(500)

    @Test func aDenseStreamWithNoReplyAwaitedWaitsTheWindow() {
        let policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, replyAwaited: false) == window)
        #expect(policy.linger(afterWaiting: .microseconds(499), replyAwaited: false) == window)
    }

    @Test func dataThatCameAfterTheWindowIsNotWaitedFor() {
        let policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: window, replyAwaited: false) == nil)
        #expect(policy.linger(afterWaiting: .seconds(2), replyAwaited: false) == nil)
    }

    @Test func aReplyAwaitedIsNeverDelayed() {
        let policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, replyAwaited: true) == nil)
        #expect(policy.linger(afterWaiting: .microseconds(100), replyAwaited: true) == nil)
    }

    @Test func aZeroWindowTurnsCoalescingOff() {
        let policy = ReadPoller.Coalescing(window: .zero)
        #expect(policy.linger(afterWaiting: .zero, replyAwaited: false) == nil)
    }

    @Test func theConnectionsWindowIsHalfAMillisecond() {
        #expect(BusConnection.coalescingWindow == .microseconds(500))
    }
}
