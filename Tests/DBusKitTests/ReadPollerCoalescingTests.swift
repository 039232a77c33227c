import Testing
@testable import DBusKit

/// When the reading thread sleeps before polling again (``ReadPoller/Coalescing``): only in a
/// dense stream of small turns (data came within the window, a few signals each), until the
/// turns fill up, the stream thins out or a reply is awaited.
struct ReadPollerCoalescingTests {
    private let window = Duration.microseconds(500)
    private let small = ReadPoller.Coalescing.smallTurn
    private let full = ReadPoller.Coalescing.fullTurn

    @Test func aSmallTurnInADenseStreamStartsCoalescing() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .microseconds(499), signals: 1, replyAwaited: false) == window)
        #expect(policy.isCoalescing)
        #expect(policy.linger(afterWaiting: .zero, signals: small - 1, replyAwaited: false) == window)
    }

    @Test func aDenseStreamThatFillsItsTurnsIsNotCoalesced() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, signals: small, replyAwaited: false) == nil)
        #expect(!policy.isCoalescing)
    }

    @Test func coalescingGoesOnUntilATurnIsFull() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, signals: 2, replyAwaited: false) == window)
        // The batches a sleep gathers are bigger than the turns that started it.
        #expect(policy.linger(afterWaiting: .zero, signals: full - 1, replyAwaited: false) == window)
        #expect(policy.linger(afterWaiting: .zero, signals: full, replyAwaited: false) == nil)
        #expect(!policy.isCoalescing)
        // Ended: a turn must be small again to start it.
        #expect(policy.linger(afterWaiting: .zero, signals: small, replyAwaited: false) == nil)
        #expect(policy.linger(afterWaiting: .zero, signals: 1, replyAwaited: false) == window)
    }

    @Test func dataThatCameAfterTheWindowEndsIt() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: window, signals: 1, replyAwaited: false) == nil)
        #expect(policy.linger(afterWaiting: .zero, signals: 1, replyAwaited: false) == window)
        #expect(policy.linger(afterWaiting: .seconds(2), signals: 1, replyAwaited: false) == nil)
        #expect(!policy.isCoalescing)
    }

    @Test func aReplyAwaitedIsNeverDelayed() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, signals: 1, replyAwaited: true) == nil)
        #expect(policy.linger(afterWaiting: .zero, signals: 1, replyAwaited: false) == window)
        #expect(policy.linger(afterWaiting: .zero, signals: 1, replyAwaited: true) == nil)
        #expect(!policy.isCoalescing)
    }

    @Test func aTurnWithNoSignalIsNotCoalesced() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, signals: 0, replyAwaited: false) == nil)
    }

    @Test func aZeroWindowTurnsCoalescingOff() {
        var policy = ReadPoller.Coalescing(window: .zero)
        #expect(policy.linger(afterWaiting: .zero, signals: 1, replyAwaited: false) == nil)
    }
}
