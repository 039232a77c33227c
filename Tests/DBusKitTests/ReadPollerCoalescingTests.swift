import Testing
import Synchronization
import Dispatch
@testable import DBusKit
import SimulatorHarness

/// When the reading thread sleeps before polling again (``ReadPoller/Coalescing``): after a
/// turn of fewer than 4 signals whose data came within the 0.5 ms window, and on until a
/// turn brings 32, the stream thins out, or a method call comes in; never while a reply is
/// awaited (``ReplyWatch``). The numbers are the ones BusConnection's and the man page's
/// comments give: a change of policy changes these tests.
struct ReadPollerCoalescingTests {
    private let window = Duration.microseconds(500)

    private static func signals(_ n: Int) -> ReadPoller.Turn { .init(signals: n, callsReceived: 0) }

    @Test func theConnectionsWindowIsTheDocumentedHalfMillisecond() {
        #expect(BusConnection.coalescingWindow == .microseconds(500))
    }

    @Test func aTurnOfFewerThanFourSignalsInADenseStreamStartsCoalescing() {
        for n in 1...3 {
            var policy = ReadPoller.Coalescing(window: window)
            #expect(policy.linger(afterWaiting: .microseconds(499), turn: Self.signals(n)) == window, "\(n) signals")
            #expect(policy.isCoalescing)
        }
    }

    @Test func aDenseStreamOfFourOrMoreSignalsATurnIsNotCoalesced() {
        for n in [4, 5, 31, 1000] {
            var policy = ReadPoller.Coalescing(window: window)
            #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(n)) == nil, "\(n) signals")
            #expect(!policy.isCoalescing)
        }
    }

    @Test func coalescingGoesOnUntilATurnBringsThirtyTwo() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(2)) == window)
        // The batches a sleep gathers are bigger than the turns that started it.
        for n in [4, 17, 31] {
            #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(n)) == window, "\(n) signals")
        }
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(32)) == nil)
        #expect(!policy.isCoalescing)
        // Ended: a turn must be small again to start it.
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(4)) == nil)
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(1)) == window)
    }

    @Test func dataThatCameAfterTheWindowEndsIt() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: window, turn: Self.signals(1)) == nil)
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(1)) == window)
        #expect(policy.linger(afterWaiting: .seconds(2), turn: Self.signals(1)) == nil)
        #expect(!policy.isCoalescing)
    }

    @Test func aTurnThatReceivedAMethodCallEndsIt() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(1)) == window)
        #expect(policy.linger(afterWaiting: .zero, turn: .init(signals: 1, callsReceived: 1)) == nil)
        #expect(!policy.isCoalescing)
    }

    @Test func aSkippedSleepEndsCoalescing() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(1)) == window)
        policy.sleepSkipped()
        #expect(!policy.isCoalescing)
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(4)) == nil)
    }

    @Test func aTurnWithNoSignalOrAZeroWindowIsNotCoalesced() {
        var policy = ReadPoller.Coalescing(window: window)
        #expect(policy.linger(afterWaiting: .zero, turn: Self.signals(0)) == nil)
        var off = ReadPoller.Coalescing(window: .zero)
        #expect(off.linger(afterWaiting: .zero, turn: Self.signals(1)) == nil)
    }

    // MARK: - ReplyWatch

    @Test func noSleepWhileAReplyIsAwaited() {
        let replies = ReplyWatch()
        replies.callSent()
        var slept = false
        #expect(!replies.sleepUnlessAwaited { slept = true })
        #expect(!slept)
        #expect(!replies.isSleeping)
        replies.settled()
        var sleepingInside = false
        #expect(replies.sleepUnlessAwaited { sleepingInside = replies.isSleeping })
        #expect(sleepingInside)
        #expect(!replies.isSleeping)
        replies.callSent()
        replies.callSent()
        replies.settled(2)
        #expect(replies.count == 0)
    }

    // MARK: - On a bus

    /// Waits (off the cooperative pool) for `semaphore`, up to 30 s; false when it never came.
    private static func wait(for semaphore: DispatchSemaphore) async -> Bool {
        await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            DispatchQueue.global().async { done.resume(returning: semaphore.wait(timeout: .now() + 30) == .success) }
        }
    }

    /// Exports an object on `server` whose every call signals `entered`, then holds its reply
    /// (`reply`) until `release` is signalled (30 s at most).
    private static func exportHoldingItsReplies(on server: BusConnection, reply: [DBusValue])
        -> (entered: DispatchSemaphore, release: DispatchSemaphore) {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        server.export(BusExportTests.path) { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 30)
            return .values(reply)
        }
        return (entered, release)
    }

    /// A call counts from the moment it is sent until its reply is delivered: the read thread
    /// never sleeps through a reply. The peer holds its reply until the count has been seen.
    @Test func aCallCountsAsAwaitedUntilItsReplyIsDelivered() async throws {
        try await Simulator.with { bus in
            let server = try await BusConnection.connect(to: bus.address)
            defer { server.close() }
            let client = try await BusConnection.connect(to: bus.address)
            defer { client.close() }
            let (entered, release) = Self.exportHoldingItsReplies(on: server, reply: [.uint32(7)])
            #expect(client.callsAwaitingReply == 0)
            let call = Task { try await client.call(BusExportTests.call("Hold", to: server)) }
            try #require(await Self.wait(for: entered), "the call never reached the peer")
            #expect(client.callsAwaitingReply == 1)
            release.signal()
            let reply = try await call.value
            #expect(reply.body.first?.integer == 7)
            #expect(client.callsAwaitingReply == 0)
        }
    }

    /// Calls that end without a reply settle too: an error reply, a call on a closed
    /// connection, and every pending call failed by the close.
    @Test func everyWayACallEndsSettlesIt() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            await #expect(throws: BusError.self) {
                _ = try await connection.call(BusConnection.busCall("GetNameOwner", [.string("org.blectl.Nobody")]))
            }
            #expect(connection.callsAwaitingReply == 0)
            let server = try await BusConnection.connect(to: bus.address)
            defer { server.close() }
            let (entered, release) = Self.exportHoldingItsReplies(on: server, reply: [])
            // A call whose reply is held until the close has failed it.
            let held = Task { try await connection.call(BusExportTests.call("Hold", to: server)) }
            try #require(await Self.wait(for: entered), "the call never reached the peer")
            #expect(connection.callsAwaitingReply == 1)
            // A call given up at its timeout (the peer holds its reply): cancelled, settled.
            await #expect(throws: BusError.self) {
                _ = try await connection.call(BusExportTests.call("Hold", to: server), timeout: .milliseconds(100))
            }
            // The cancellation reaches the queue after the timeout is thrown: observed.
            let deadline = ContinuousClock.now + .seconds(30)
            while connection.callsAwaitingReply != 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(connection.callsAwaitingReply == 1)
            connection.close()
            release.signal()
            release.signal()  // the timed-out call, still queued at the peer
            await #expect(throws: BusError.disconnected) { _ = try await held.value }
            #expect(connection.callsAwaitingReply == 0)
            await #expect(throws: BusError.disconnected) {
                _ = try await connection.call(BusConnection.busCall("ListNames", []))
            }
            #expect(connection.callsAwaitingReply == 0)
        }
    }

    /// The read thread's turn counts the signals it dispatched and the method calls it
    /// answered (what the policy decides on).
    @Test func aTurnCountsItsSignalsAndItsIncomingCalls() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            var ticks = try await QueueTaskExecutorTests.ticks(on: connection).makeAsyncIterator()
            try await QueueTaskExecutorTests.emitTicks(1...1, on: bus.address)
            #expect(await ticks.next() == [1])
            #expect(connection.lastPollTurn == ReadPoller.Turn(signals: 1, callsReceived: 0))
            connection.export(BusExportTests.path) { _ in .values([]) }
            let caller = try await BusConnection.connect(to: bus.address)
            defer { caller.close() }
            _ = try await caller.call(BusExportTests.call("Ping", to: connection))
            #expect(connection.lastPollTurn == ReadPoller.Turn(signals: 0, callsReceived: 1))
        }
    }
}
