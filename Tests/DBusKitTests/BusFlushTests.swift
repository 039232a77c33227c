// flush(within:) answers at once when nothing asked for is unsent (no turn of the
// connection's queue: blectl's clean-up used to wait for one hop there and one back), and
// every kind of send (a call, a call without reply, an emit, a reply to an incoming call)
// counts as unsent from the moment it is asked for until libdbus has written it.

import DBusKit
import Dispatch
import SimulatorHarness
import Synchronization
import Testing

@Suite struct BusFlushTests {
    /// Holds a connection's queue until ``release()`` (or, as a hang-breaker, 20 s).
    final class QueueHold: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let released = Atomic<Bool>(false)
        var isReleased: Bool { released.load(ordering: .sequentiallyConsistent) }

        init(_ queue: DispatchQueue) {
            let held = DispatchSemaphore(value: 0)
            queue.async { [gate] in
                held.signal()
                _ = gate.wait(timeout: .now() + 20)
            }
            held.wait()
        }

        func release() {
            if !released.exchange(true, ordering: .sequentiallyConsistent) { gate.signal() }
        }
    }

    @Test func aFlushWithNothingUnsentAnswersWithoutATurnOfTheQueue() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.kill() }
        let connection = try await BusConnection.connect(to: bus.address)
        defer { connection.close() }
        _ = try await connection.call(BusConnection.busCall("ListNames", []), timeout: .seconds(10))
        let hold = QueueHold(connection.queue)
        defer { hold.release() }
        // A hang-breaker, not a timing assertion: before, the flush waited for the queue.
        let breaker = Task {
            try? await Task.sleep(for: .seconds(20))
            hold.release()
        }
        defer { breaker.cancel() }
        #expect(await connection.flush(within: .seconds(30)))
        #expect(!hold.isReleased, "the flush waited for the queue")
    }

    /// libdbus answers Peer.Ping itself while dispatching; its reply is counted when it could
    /// not be written at once, and once written nothing is left unsent.
    @Test func aPingLibdbusAnswersLeavesNothingUnsent() async throws {
        let pair = try await ServerAndClient.start()
        defer { pair.close() }
        let (server, client) = (pair.server, pair.client)
        let reply = try await client.call(MethodCall(destination: server.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer",
                                                     member: "Ping"), timeout: .seconds(10))
        #expect(reply.kind == .methodReturn)
        #expect(await eventually { server.nothingUnsent })
        #expect(await server.flush(within: .seconds(10)))
    }

    @Test func everyKindOfSendIsUnsentUntilWritten() async throws {
        let pair = try await ServerAndClient.start()
        defer { pair.close() }
        let (server, client) = (pair.server, pair.client)
        let path: ObjectPath = "/org/blectl/test"
        let incoming = Lock<Message?>(nil)
        server.export(path) { call in
            incoming.withLock { $0 = call }
            return .noReply
        }
        @Sendable func call(_ member: String) -> MethodCall {
            MethodCall(destination: server.uniqueName, path: path, interface: "org.blectl.Test1", member: member)
        }
        // A call answered later: the server holds the incoming call to reply to it below.
        client.send(call("Later")) { _ in }
        #expect(await eventually { incoming.withLock { $0 } != nil })
        let pending = try #require(incoming.withLock { $0 })
        #expect(await eventually { server.nothingUnsent && client.nothingUnsent })

        let kinds: [(String, BusConnection, @Sendable () -> Void)] = [
            ("a call", client, { client.send(call("Ping")) { _ in } }),
            ("a call without reply", client, { client.sendNoReply(call("Ping")) }),
            ("an emit", client, { Task { try? await client.emit([Signal(path: "/", interface: "org.blectl.Test", member: "Ping")]) } }),
            ("a reply to an incoming call", server, { server.reply(to: pending, .values([])) }),
        ]
        for (kind, connection, send) in kinds {
            let hold = QueueHold(connection.queue)
            send()
            // Counted when asked for, whatever the queue is doing (the emit's task starts later).
            #expect(await eventually { !connection.nothingUnsent }, "\(kind)")
            hold.release()
            #expect(await connection.flush(within: .seconds(10)), "\(kind)")
            #expect(connection.nothingUnsent, "\(kind)")
        }
    }
}
