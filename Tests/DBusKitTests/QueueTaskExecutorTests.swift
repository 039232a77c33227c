import Dispatch
import Testing
@testable import DBusKit
import SimulatorHarness

/// A task that prefers a connection's ``BusConnection/taskExecutor`` runs on the connection's
/// queue: its own code, and every resumption by a signal handler (which is what saves the
/// thread hand-off per message), in the order the signals arrived.
@Suite struct QueueTaskExecutorTests {
    static let mark = DispatchSpecificKey<String>()

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
            let rule = MatchRule(sender: nil, interface: "org.blectl.Test", member: "Tick")
            let (stream, continuation) = AsyncStream.makeStream(of: [Int].self)
            connection.addSignalHandler(matching: [rule]) { messages in
                continuation.yield(messages.compactMap { $0.body.first?.integer })
            }
            try await connection.addMatch(rule)
            let sender = try await BusConnection.connect(to: bus.address)
            defer { sender.close() }
            let count = 200
            try await sender.emit((1...count).map { Signal(path: "/org/blectl/t", interface: "org.blectl.Test", member: "Tick", arguments: [.int32(Int32($0))]) })
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
}
