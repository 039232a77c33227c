import DBusKit

/// The events of a notification subscription (``NotificationSubscription/events``), in order:
/// an asynchronous sequence for one consumer, ending with nil when the subscription ends and
/// throwing the error that ended it otherwise (``BLEError/disconnected(_:)`` for a lost link
/// without a ``ReconnectPolicy``, ``BLEError/unavailable(_:)`` when bluetoothd or the bus
/// goes).
///
/// Events are kept until read (no limit: a consumer that stops reading holds them in memory).
/// Iterating from two tasks at once is a programming error and traps. When the consuming task
/// is cancelled, a pending ``Iterator/next()`` returns nil, and so does every later one.
///
/// Why not an `AsyncThrowingStream`: its storage is generic code compiled in the standard
/// library, which looks up its element type's metadata on every `yield` and every `next()`,
/// a cost `blectl notify` shows per value (BENCHMARKS.md, "The subscription's events"). This
/// type is compiled with BlueZKit, for this element type, and tells the consumer how many
/// events it can read without waiting (``Iterator/bufferedCount``).
public struct SubscriptionEvents: AsyncSequence, Sendable {
    public typealias Element = SubscriptionEvent
    public typealias Failure = any Error

    let channel: Channel

    /// A new sequence and the channel its events are sent through.
    static func make() -> (SubscriptionEvents, Channel) {
        let channel = Channel()
        return (SubscriptionEvents(channel: channel), channel)
    }

    public func makeAsyncIterator() -> Iterator { Iterator(channel: channel) }

    public struct Iterator: AsyncIteratorProtocol {
        let channel: Channel

        /// The next event; nil once the subscription has ended (or the consuming task was
        /// cancelled). Throws the error that ended the subscription, once.
        public mutating func next() async throws -> SubscriptionEvent? {
            try await channel.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> SubscriptionEvent? {
            try await channel.next()
        }

        /// The events received and not yet read: ``next()`` returns the first of them without
        /// waiting. Events come in bursts (those of one read from the bus arrive together), so
        /// a consumer that writes its output in batches can write once this is 0, before it
        /// waits. The end is not counted.
        public var bufferedCount: Int { channel.bufferedCount }
    }

    /// The producing side: events in, the end once. Every method may be called from any
    /// thread; nothing is sent after the end.
    final class Channel: Sendable {
        private struct State {
            /// Events not yet read: `buffer[head...]`.
            var buffer: [SubscriptionEvent] = []
            var head = 0
            /// The consumer waiting in ``next()``.
            var waiting: UnsafeContinuation<SubscriptionEvent?, any Error>?
            /// Set by ``finish(throwing:)``: nil for a plain end, else the error still to throw.
            var ended = false
            var failure: (any Error)?
            /// The consuming task was cancelled: everything reads as the end.
            var cancelled = false

            /// The oldest event not yet read, taken; nil when there is none.
            mutating func takeBuffered() -> SubscriptionEvent? {
                guard head < buffer.count else { return nil }
                let event = buffer[head]
                head += 1
                if head == buffer.count {
                    buffer.removeAll(keepingCapacity: true)
                    head = 0
                } else if head >= 1024, head * 2 >= buffer.count {
                    buffer.removeFirst(head)
                    head = 0
                }
                return event
            }
        }
        private let state = Lock(State())

        /// Sends `event` (dropped after the end).
        func yield(_ event: SubscriptionEvent) {
            let waiter = state.withLock { state -> UnsafeContinuation<SubscriptionEvent?, any Error>? in
                guard !state.ended, !state.cancelled else { return nil }
                if let waiter = state.waiting {
                    state.waiting = nil
                    return waiter
                }
                state.buffer.append(event)
                return nil
            }
            waiter?.resume(returning: event)
        }

        /// Ends the sequence after the events sent so far: with `error` thrown after them, or
        /// nil. Only the first call counts.
        func finish(throwing error: (any Error)? = nil) {
            let waiter = state.withLock { state -> UnsafeContinuation<SubscriptionEvent?, any Error>? in
                guard !state.ended else { return nil }
                state.ended = true
                state.failure = error
                defer { state.waiting = nil }
                if state.waiting != nil { state.failure = nil }
                return state.waiting
            }
            if let waiter {
                if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
            }
        }

        /// Events received and not yet read.
        var bufferedCount: Int {
            state.withLock { $0.buffer.count - $0.head }   // emptied when the consumer is cancelled
        }

        /// The next event, the end (nil, or the error once), or a wait for either.
        fileprivate func next() async throws -> SubscriptionEvent? {
            // An event already here is taken without a continuation or a cancellation handler
            // (most of a burst); a cancelled consumer goes the long way, which reads the end.
            if !Task.isCancelled, let event = state.withLock({ $0.takeBuffered() }) { return event }
            // The producer held `state` before resuming: ordered after it (Lock.synchronize).
            defer { state.synchronize() }
            return try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<SubscriptionEvent?, any Error>) in
                    let outcome = state.withLock { state -> Result<SubscriptionEvent?, any Error>? in
                        if let event = state.takeBuffered() { return .success(event) }   // none once cancelled
                        if state.cancelled { return .success(nil) }
                        if state.ended {
                            defer { state.failure = nil }
                            return state.failure.map { .failure($0) } ?? .success(nil)
                        }
                        precondition(state.waiting == nil, "SubscriptionEvents iterated from two tasks at once")
                        state.waiting = continuation
                        return nil
                    }
                    if let outcome { continuation.resume(with: outcome) }
                }
            } onCancel: {
                cancel()
            }
        }

        /// The consuming task was cancelled: a waiting ``next()`` returns nil, the events kept
        /// are dropped, and the sequence has ended for the consumer.
        private func cancel() {
            let waiter = state.withLock { state -> UnsafeContinuation<SubscriptionEvent?, any Error>? in
                state.cancelled = true
                state.buffer.removeAll()
                state.head = 0
                defer { state.waiting = nil }
                return state.waiting
            }
            waiter?.resume(returning: nil)
        }
    }
}
