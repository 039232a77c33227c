import Foundation
import Testing
import DBusKit
@testable import BlueZKit

/// ``SubscriptionEvents``, the sequence a notification subscription's events come through:
/// order, the end (plain or with an error, thrown once), and the consumer's cancellation.
@Suite struct SubscriptionEventsTests {
    static func value(_ i: Int) -> SubscriptionEvent {
        .value(NotifiedValue(bytes: [UInt8(i & 0xFF), UInt8(i >> 8 & 0xFF), UInt8(i >> 16 & 0xFF)], connection: 1, receivedAt: .zero))
    }

    @Test func eventsInOrderThenNilForEver() async throws {
        let (events, channel) = SubscriptionEvents.make()
        channel.yield(Self.value(1))
        channel.yield(.linkLost(connection: 1))
        var iterator = events.makeAsyncIterator()
        #expect(try await iterator.next() == Self.value(1))
        #expect(try await iterator.next() == .linkLost(connection: 1))
        // One sent while the consumer waits.
        async let third = iterator.next()
        try await Task.sleep(for: .milliseconds(20))
        channel.yield(.restored(connection: 2))
        #expect(try await third == .restored(connection: 2))
        channel.finish()
        channel.yield(Self.value(9))  // after the end: dropped
        var rest = events.makeAsyncIterator()
        #expect(try await rest.next() == nil)
        #expect(try await rest.next() == nil)
    }

    @Test func anErrorComesAfterTheEventsSentBeforeItAndOnlyOnce() async throws {
        let (events, channel) = SubscriptionEvents.make()
        channel.yield(Self.value(1))
        channel.finish(throwing: BLEError.disconnected(BLEOperation(.notifications)))
        channel.finish()  // only the first end counts
        var iterator = events.makeAsyncIterator()
        #expect(try await iterator.next() == Self.value(1))
        await #expect(throws: BLEError.self) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    @Test func anErrorReachesAWaitingConsumer() async throws {
        let (events, channel) = SubscriptionEvents.make()
        let consumer = Task { () -> Result<Int, any Error> in
            var count = 0
            do {
                for try await _ in events { count += 1 }
                return .success(count)
            } catch {
                return .failure(error)
            }
        }
        channel.yield(Self.value(1))
        try await Task.sleep(for: .milliseconds(50))
        channel.finish(throwing: BLEError.disconnected(BLEOperation(.notifications)))
        guard case .failure(let error) = await consumer.value else { Issue.record("no error"); return }
        #expect(error is BLEError)
    }

    /// Cancelling the consuming task ends its wait with nil; what is sent afterwards is dropped.
    @Test func cancellingTheConsumerEndsItsWait() async throws {
        let (events, channel) = SubscriptionEvents.make()
        let started = Lock(false)
        let consumer = Task { () -> [SubscriptionEvent] in
            var seen: [SubscriptionEvent] = []
            var iterator = events.makeAsyncIterator()
            started.withLock { $0 = true }
            while let event = try? await iterator.next() { seen.append(event) }
            return seen
        }
        channel.yield(Self.value(1))
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(50))
        consumer.cancel()
        let seen = await consumer.value
        #expect(seen == [Self.value(1)])
        channel.yield(Self.value(2))
        var iterator = events.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
    }

    /// `bufferedCount` counts what `next()` returns without waiting: the events sent and not
    /// yet read, not the end; nothing once the consumer was cancelled.
    @Test func bufferedCountIsWhatCanBeReadWithoutWaiting() async throws {
        let (events, channel) = SubscriptionEvents.make()
        var iterator = events.makeAsyncIterator()
        #expect(iterator.bufferedCount == 0)
        for i in 1...3 { channel.yield(Self.value(i)) }
        #expect(iterator.bufferedCount == 3)
        #expect(try await iterator.next() == Self.value(1))
        #expect(iterator.bufferedCount == 2)
        channel.finish(throwing: BLEError.disconnected(BLEOperation(.notifications)))
        #expect(iterator.bufferedCount == 2)
        #expect(try await iterator.next() == Self.value(2))
        #expect(try await iterator.next() == Self.value(3))
        #expect(iterator.bufferedCount == 0)
        await #expect(throws: BLEError.self) { _ = try await iterator.next() }
        #expect(iterator.bufferedCount == 0)
    }

    /// A consumer whose task is cancelled reads the end, even with events waiting to be read
    /// (an event already here is otherwise taken without a wait).
    @Test func aCancelledConsumerReadsTheEndWithEventsWaiting() async throws {
        let (events, channel) = SubscriptionEvents.make()
        channel.yield(Self.value(1))
        channel.yield(Self.value(2))
        let consumer = Task { () -> (SubscriptionEvent?, Int) in
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = events.makeAsyncIterator()
            let first = try? await iterator.next()
            return (first ?? nil, iterator.bufferedCount)
        }
        let (first, left) = await consumer.value
        #expect(first == nil)
        #expect(left == 0)
        var later = events.makeAsyncIterator()
        #expect(try await later.next() == nil)
    }

    /// A producer on another thread racing the consumer: every event once, in order, across the
    /// buffer's compaction.
    @Test func aBurstFromAnotherThreadArrivesWholeAndInOrder() async throws {
        let (events, channel) = SubscriptionEvents.make()
        let count = 50_000
        let producer = Thread {
            for i in 0..<count {
                channel.yield(Self.value(i))
                if i % 5_000 == 0 { usleep(1_000) }
            }
            channel.finish()
        }
        producer.start()
        var received = 0
        for try await event in events {
            #expect(event == Self.value(received))
            if event != Self.value(received) { break }
            received += 1
        }
        #expect(received == count)
    }
}
