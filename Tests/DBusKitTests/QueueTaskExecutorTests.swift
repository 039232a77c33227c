import Dispatch
import Foundation
import Synchronization
import Testing
@testable import DBusKit
import SimulatorHarness

/// A task that prefers a connection's ``BusConnection/taskExecutor`` runs on the connection's
/// queue: its own code, and every resumption by a signal handler (which is what saves the
/// thread hand-off per message), in the order the signals arrived.
@Suite struct QueueTaskExecutorTests {
    static let mark = DispatchSpecificKey<String>()
    static let tick = MatchRule(sender: nil, interface: "org.blectl.Test", member: "Tick")

    /// The values of the Tick signals `connection` receives, a batch per handler call.
    static func ticks(on connection: BusConnection) async throws -> AsyncStream<[Int]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [Int].self)
        connection.addSignalHandler(matching: [tick]) { messages in
            continuation.yield(messages.compactMap { $0.body.first?.integer })
        }
        try await connection.addMatch(tick)
        return stream
    }

    /// Emits Tick signals carrying `values` from a connection of its own (back to back, or one
    /// emit per signal) and returns once they are written.
    static func emitTicks(_ values: ClosedRange<Int>, on address: String, oneByOne: Bool = false) async throws {
        let sender = try await BusConnection.connect(to: address)
        defer { sender.close() }
        let signals = values.map { Signal(path: "/org/blectl/t", interface: "org.blectl.Test", member: "Tick", arguments: [.int32(Int32($0))]) }
        if oneByOne {
            for signal in signals { try await sender.emit([signal]) }
        } else {
            try await sender.emit(signals)
        }
        // close() drops what libdbus has not written yet.
        await sender.flush(within: .seconds(30))
    }

    @Test func aTaskPreferringTheExecutorRunsOnTheConnectionQueue() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            connection.queue.setSpecific(key: Self.mark, value: "connection")
            let outside = DispatchQueue.getSpecific(key: Self.mark)
            let inside = await withTaskExecutorPreference(connection.taskExecutor) {
                DispatchQueue.getSpecific(key: Self.mark)
            }
            #expect(outside == nil)
            #expect(inside == "connection")
        }
    }

    @Test func aConsumerIsResumedOnTheQueueForEverySignalInOrder() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            connection.queue.setSpecific(key: Self.mark, value: "connection")
            let stream = try await Self.ticks(on: connection)
            let count = 200
            try await Self.emitTicks(1...count, on: bus.address)
            let (values, places) = await withTaskExecutorPreference(connection.taskExecutor) {
                var values: [Int] = []
                var places = Set<String?>()
                for await batch in stream {
                    places.insert(DispatchQueue.getSpecific(key: Self.mark))
                    values += batch
                    if values.count >= count { break }
                }
                return (values, places)
            }
            #expect(values == Array(1...count))
            #expect(places == ["connection"])
        }
    }

    /// The calling thread's name (`/proc/thread-self/comm`).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The thread that waited for the socket reads it, runs the signal handler and then the
    /// consumer the handler resumed: no Dispatch worker wakes in between (issue 12: 3-4
    /// context switches per message on a live discovery when a Dispatch source woke a worker).
    /// The consumer is started by the first handler call, so it runs on that thread from its
    /// first line (a task started elsewhere begins on a Dispatch worker of the queue).
    @Test func theThreadThatReadTheSocketRunsHandlerAndConsumer() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            let count = 100
            let (stream, continuation) = AsyncStream.makeStream(of: (values: [Int], thread: String).self)
            let (consumers, consumerContinuation) = AsyncStream.makeStream(of: Task<([Int], Set<String>), Never>.self)
            let started = Mutex(false)
            let executor = connection.taskExecutor
            connection.addSignalHandler(matching: [Self.tick]) { messages in
                continuation.yield((messages.compactMap { $0.body.first?.integer }, Self.threadName()))
                guard started.withLock({ wasStarted in defer { wasStarted = true }; return !wasStarted }) else { return }
                consumerContinuation.yield(Task(executorPreference: executor) {
                    var values: [Int] = []
                    var threads: Set<String> = [Self.threadName()]
                    for await batch in stream {
                        threads.insert(batch.thread)
                        threads.insert(Self.threadName())
                        values += batch.values
                        if values.count >= count { break }
                    }
                    return (values, threads)
                })
            }
            try await connection.addMatch(Self.tick)
            try await Self.emitTicks(1...count, on: bus.address, oneByOne: true)
            var iterator = consumers.makeAsyncIterator()
            let consumer = try #require(await iterator.next())
            let (values, threads) = await consumer.value
            #expect(values == Array(1...count))
            #expect(threads == [ReadPoller.threadName])
        }
    }

    /// libdbus turns the read watch off while it holds more than its cap of received bytes and
    /// on again once they are dispatched (from the polling thread's own turn or from a
    /// Dispatch worker's). With a one-byte cap it does so around every message: none may be
    /// lost or left unread (a poller that missed a turn-on would hang here).
    @Test func everyMessageArrivesWhenTheReadWatchTurnsOffAndOnAroundEachOne() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            connection.setMaxReceivedSize(1)
            let stream = try await Self.ticks(on: connection)
            let count = 2_000
            try await Self.emitTicks(1...count, on: bus.address)
            let values = try await BusConnectionLossTests.finishes {
                var values: [Int] = []
                for await batch in stream {
                    values += batch
                    if values.count >= count { break }
                }
                return values
            }
            #expect(values == Array(1...count), "\(values?.count ?? 0) of \(count) received before the limit")
            // Calls still get their replies with the watch toggling.
            let reply = try await connection.call(BusConnection.busCall("GetId", []), timeout: .seconds(30))
            #expect(reply.body.first?.string?.count == 32)
        }
    }
}
