// The connection's end: a hang-up of the daemon, close() from anywhere, a stalled daemon.
// Whatever happens, every call ends (at once once the connection is gone), the signals that
// arrived before the end are delivered first, and nothing blocks or traps.

import DBusKit
import Dispatch
import SimulatorHarness
import Testing

@Suite struct BusConnectionLossTests {
    /// `body`, or a recorded failure if it has not finished within `limit` (a hang detector,
    /// not a timing assertion).
    static func finishes<T: Sendable>(within limit: Duration = .seconds(20), _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask { try await Task.sleep(for: limit); return nil }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    static let listNames = BusConnection.busCall("ListNames", [])

    @Test func everyCallFailsAtOnceOnceTheDaemonHungUp() async throws {
        let bus = try await PrivateBus.start()
        let connection = try await BusConnection.connect(to: bus.address)
        let lost = OneShot<Void>()
        connection.onConnectionLost { lost.succeed(()) }
        bus.kill()
        try await withOneShot { (wait: OneShot<Void>) in lost.onFinish { wait.succeed(()) } }
        // No timeout given: before, such a call registered a handler nobody would answer.
        let outcome = try await Self.finishes {
            do {
                _ = try await connection.call(Self.listNames)
                return "answered"
            } catch let error as BusError {
                return "\(error)"
            }
        }
        #expect(outcome == "\(BusError.disconnected)")
        #expect(connection.registeredReplyHandlerCount == 0)
        // A handler registered after the end runs at once.
        let late = OneShot<Void>()
        connection.onConnectionLost { late.succeed(()) }
        #expect(try await Self.finishes { try await withOneShot { (w: OneShot<Void>) in late.onFinish { w.succeed(()) } } } != nil)
    }

    @Test func signalsBeforeTheHangUpComeBeforePendingCallsFail() async throws {
        let bus = try await PrivateBus.start()
        let receiver = try await BusConnection.connect(to: bus.address)
        let sender = try await BusConnection.connect(to: bus.address)
        let log = Lock<[String]>([])
        sender.export("/never") { _ in .noReply }
        let rule = MatchRule(interface: "org.blectl.Test", member: "Ping")
        receiver.addSignalHandler(matching: [rule]) { messages in
            log.withLock { $0 += messages.map { "signal \($0.body.first?.integer ?? -1)" } }
        }
        try await receiver.addMatch(rule)
        receiver.onConnectionLost { log.withLock { $0.append("lost") } }
        // A call that stays pending (the peer never answers).
        receiver.send(MethodCall(destination: sender.uniqueName, path: "/never", interface: "org.blectl.Test", member: "Never")) { result in
            log.withLock { $0.append(result.isSuccess ? "reply" : "call failed") }
        }
        // Hold the receiver's queue, so the signals and the hang-up wait in its socket together.
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        receiver.queue.async { holding.signal(); held.wait() }
        holding.wait()
        try await sender.emit([1, 2, 3].map { Signal(path: "/", interface: "org.blectl.Test", member: "Ping", arguments: [.int32($0)]) })
        // The daemon has routed the signals once it answers the sender's next call.
        _ = try await sender.call(Self.listNames)
        bus.kill()
        held.signal()
        #expect(await eventually { log.withLock { $0.contains("lost") } })
        #expect(log.withLock { $0 } == ["signal 1", "signal 2", "signal 3", "call failed", "lost"])
    }

    @Test func closeAndNewCallsFromInsideAHandlerNeitherTrapNorBlock() async throws {
        let bus = try await PrivateBus.start()
        let receiver = try await BusConnection.connect(to: bus.address)
        let sender = try await BusConnection.connect(to: bus.address)
        let rule = MatchRule(interface: "org.blectl.Test", member: "Ping")
        let log = Lock<[String]>([])
        let done = OneShot<Void>()
        receiver.addSignalHandler(matching: [rule]) { _ in
            // Re-entry on the connection's own queue: registering, closing, calling.
            receiver.addSignalHandler(matching: [rule]) { _ in log.withLock { $0.append("second handler") } }
            receiver.close()
            receiver.send(Self.listNames) { result in
                log.withLock { $0.append(result.isSuccess ? "answered" : "failed") }
                done.succeed(())
            }
        }
        try await receiver.addMatch(rule)
        try await sender.emit([Signal(path: "/", interface: "org.blectl.Test", member: "Ping")])
        #expect(try await Self.finishes { try await withOneShot { (w: OneShot<Void>) in done.onFinish { w.succeed(()) } } } != nil)
        #expect(log.withLock { $0 } == ["failed"])
        let after = try await Self.finishes {
            do { _ = try await receiver.call(Self.listNames); return "answered" } catch { return "\(error)" }
        }
        #expect(after == "\(BusError.disconnected)")
    }

    @Test func flushAndCloseReturnWhileTheDaemonIsStalled() async throws {
        let bus = try await PrivateBus.start()
        let connection = try await BusConnection.connect(to: bus.address)
        bus.pause()
        defer { bus.resume() }
        // More than the socket holds: the rest waits in libdbus's outgoing queue.
        let big = DBusValue.bytes([UInt8](repeating: 0xAB, count: 64 * 1024))
        try await connection.emit((0..<64).map { _ in Signal(path: "/", interface: "org.blectl.Test", member: "Big", arguments: [big]) })
        let flushed = try await Self.finishes { await connection.flush(within: .milliseconds(300)) }
        #expect(flushed == false)
        let closed = try await Self.finishes { connection.close(); return true }
        #expect(closed == true)
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
