// Exported objects: a connection answering method calls (as a pairing agent does for
// bluetoothd), now or later, with values or errors; the caller's identity in the message.

import Testing
import Synchronization
import Dispatch
import Glibc
@testable import DBusKit
import SimulatorHarness

@Suite struct BusExportTests {
    static let path: ObjectPath = "/org/blectl/test"

    static func call(_ member: String, to server: BusConnection, path: ObjectPath = path, _ arguments: [DBusValue] = []) -> MethodCall {
        MethodCall(destination: server.uniqueName, path: path, interface: "org.blectl.Test1", member: member, arguments: arguments)
    }

    static func errorName(_ body: () async throws -> Message) async -> String? {
        do {
            _ = try await body()
            return nil
        } catch let error as BusError {
            return error.errorName
        } catch {
            return "\(error)"
        }
    }

    /// A call sent and the connection closed at once, from outside its queue: the call is on
    /// the wire before the connection closes, every time (close follows the send on the
    /// queue, and libdbus writes a sent message at once when the socket takes it).
    @Test func aCallSentJustBeforeCloseIsWritten() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.kill() }
        let server = try await BusConnection.connect(to: bus.address)
        defer { server.close() }
        let seen = Lock<[UInt32]>([])
        server.export(Self.path) { call in
            if case .uint32(let n)? = call.body.first { seen.withLock { $0.append(n) } }
            return .values([])
        }
        let rounds: UInt32 = 50
        for n in 0..<rounds {
            let client = try await BusConnection.connect(to: bus.address)
            client.sendNoReply(Self.call("Disconnect", to: server, [.uint32(n)]))
            client.close()
        }
        // A barrier: a call from the server's own side after every client is gone.
        let deadline = ContinuousClock.now + .seconds(30)
        while seen.withLock({ $0.count }) < Int(rounds), ContinuousClock.now < deadline {
            _ = try await server.call(BusConnection.busCall("ListNames", []), timeout: .seconds(10))
        }
        #expect(seen.withLock { $0.sorted() } == Array(0..<rounds))
    }

    /// A call sent, then flushed with a short limit while the connection's queue is busy
    /// (a flood of incoming signals on a loaded machine): when the flush returns, the call
    /// has been handed to libdbus. The limit used to count from the flush call, so it ran out
    /// before the queue reached the send, and a process exiting after clean-up (blectl after
    /// its Disconnect) never sent it: a link left up.
    @Test func aFlushReturnsOnlyOnceWhatWasSentBeforeItIsHandedOver() async throws {
        final class Sent: BusObserver {
            let members = Lock<[String]>([])
            func observe(_ event: BusEvent, at time: ContinuousClock.Instant) {
                if case .call(let call, _, _) = event { members.withLock { $0.append(call.member) } }
            }
        }
        let bus = try await PrivateBus.start()
        defer { bus.kill() }
        let server = try await BusConnection.connect(to: bus.address)
        defer { server.close() }
        server.export(Self.path) { _ in .values([]) }
        let sent = Sent()
        let client = try await BusConnection.connect(to: bus.address, observer: sent)
        defer { client.close() }
        let held = DispatchSemaphore(value: 0)
        client.queue.async {
            held.signal()
            usleep(300_000)     // the queue busy 300 ms
        }
        held.wait()
        client.sendNoReply(Self.call("Disconnect", to: server))
        await client.flush(within: .milliseconds(20))
        #expect(sent.members.withLock { $0 }.contains("Disconnect"))
    }

    @Test func answersWithValuesAndSeesTheCaller() async throws {
        let pair = try await ServerAndClient.start()
        defer { pair.close() }
        let (server, client) = (pair.server, pair.client)
        let seen = Lock<[Message]>([])
        server.export(Self.path) { call in
            seen.withLock { $0.append(call) }
            return .values([.uint32(123_456), .string("ok")])
        }
        let reply = try await client.call(Self.call("RequestPasskey", to: server, [.objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_07")]),
                                          timeout: .seconds(10))
        #expect(reply.body == [.uint32(123_456), .string("ok")])
        let call = try #require(seen.withLock { $0.first })
        #expect(call.kind == .methodCall)
        #expect(call.sender == client.uniqueName)
        #expect(call.path == Self.path)
        #expect(call.interface == "org.blectl.Test1")
        #expect(call.member == "RequestPasskey")
        #expect(call.signature == "o")
        #expect(call.body == [.objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_07")])
    }

    @Test func errorRepliesKeepNameAndMessage() async throws {
        let pair = try await ServerAndClient.start()
        defer { pair.close() }
        let (server, client) = (pair.server, pair.client)
        server.export(Self.path) { _ in .error(name: "org.bluez.Error.Rejected", message: "not you") }
        do {
            _ = try await client.call(Self.call("RequestPasskey", to: server), timeout: .seconds(10))
            Issue.record("no error")
        } catch let error as BusError {
            #expect(error == .errorReply(name: "org.bluez.Error.Rejected", message: "not you"))
        }
        // An invalid error name is sent as Failed rather than not at all.
        server.export(Self.path) { _ in .error(name: "not an error name", message: "x") }
        #expect(await Self.errorName { try await client.call(Self.call("X", to: server), timeout: .seconds(10)) }
                == "org.freedesktop.DBus.Error.Failed")
    }

    @Test("noReply, then reply(to:) answers later; the caller waits meanwhile")
    func deferredReply() async throws {
        let pair = try await ServerAndClient.start()
        defer { pair.close() }
        let (server, client) = (pair.server, pair.client)
        let held = Lock<Message?>(nil)
        server.export(Self.path) { call in
            held.withLock { $0 = call }
            return .noReply
        }
        let answer = Task { try await client.call(Self.call("RequestConfirmation", to: server), timeout: .seconds(60)) }
        let deadline = ContinuousClock.now + .seconds(60)
        while held.withLock({ $0 }) == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let call = try #require(held.withLock { $0 })
        #expect(client.registeredReplyHandlerCount == 1, "the caller still waits")
        server.reply(to: call, .values([.boolean(true)]))
        #expect(try await answer.value.body == [.boolean(true)])
        // A deferred error reply, to the second call (waited for with a deadline of its own: a
        // slow first half must not leave the first call's message to be answered again, which
        // made this test fail under load with the second call's timeout instead).
        let failing = Task { try await client.call(Self.call("RequestConfirmation", to: server), timeout: .seconds(60)) }
        let secondDeadline = ContinuousClock.now + .seconds(60)
        while held.withLock({ $0?.serial }) == call.serial && ContinuousClock.now < secondDeadline { try await Task.sleep(for: .milliseconds(5)) }
        let second = try #require(held.withLock { $0 })
        try #require(second.serial != call.serial, "the second call never reached the server")
        server.reply(to: second, .error(name: "org.bluez.Error.Canceled", message: "later"))
        #expect(await Self.errorName { try await failing.value } == "org.bluez.Error.Canceled")
    }

    @Test("unknown paths and unexported objects answer UnknownObject; a later export replaces an earlier one")
    func unknownAndUnexported() async throws {
        let pair = try await ServerAndClient.start()
        defer { pair.close() }
        let (server, client) = (pair.server, pair.client)
        #expect(await Self.errorName { try await client.call(Self.call("X", to: server), timeout: .seconds(10)) }
                == DBusErrorName.unknownObject)
        server.export(Self.path) { _ in .values([.string("first")]) }
        let token = server.export(Self.path) { _ in .values([.string("second")]) }
        #expect(try await client.call(Self.call("X", to: server), timeout: .seconds(10)).body == [.string("second")])
        #expect(await Self.errorName { try await client.call(Self.call("X", to: server, path: "/org/blectl/other"), timeout: .seconds(10)) }
                == DBusErrorName.unknownObject)
        server.unexport(token)
        #expect(await Self.errorName { try await client.call(Self.call("X", to: server), timeout: .seconds(10)) }
                == DBusErrorName.unknownObject)
    }

    @Test("a call flagged no-reply-expected (how bluetoothd sends Agent1.Cancel) reaches the handler and gets no reply")
    func noReplyExpected() async throws {
        let pair = try await ServerAndClient.start()
        defer { pair.close() }
        let (server, client) = (pair.server, pair.client)
        let members = Lock<[String]>([])
        server.export(Self.path) { call in
            members.withLock { $0.append(call.member ?? "") }
            return .values([])
        }
        client.sendNoReply(Self.call("Cancel", to: server))
        // A round trip after it: answered after the Cancel was handled (one queue, in order).
        _ = try await client.call(Self.call("Ping", to: server), timeout: .seconds(10))
        #expect(members.withLock { $0 } == ["Cancel", "Ping"])
        #expect(client.registeredReplyHandlerCount == 0)
    }
}
