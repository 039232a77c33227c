import Testing
@testable import DBusKit
import SimulatorHarness

/// A connection's observer sees every message, in wire order: calls with their serial,
/// replies and errors by that serial with a latency, signals routed or not, replies to
/// calls given up on marked abandoned.
@Suite struct BusObserverTests {
    final class Recorder: BusObserver {
        let events = Lock<[(BusEvent, ContinuousClock.Instant)]>([])
        func observe(_ event: BusEvent, at time: ContinuousClock.Instant) { events.withLock { $0.append((event, time)) } }
        var all: [BusEvent] { events.withLock { $0.map(\.0) } }
    }

    /// `kind serial member`, compact, for comparing sequences.
    static func summary(_ event: BusEvent) -> String {
        switch event {
        case .connected(_, let name): "connected \(name.hasPrefix(":1.") ? "ok" : name)"
        case .call(let call, let serial, let expectsReply): "call \(serial) \(call.member)\(expectsReply ? "" : " noreply")"
        case .callNotSent(let call, let error): "notSent \(call.member) \(error)"
        case .reply(let message, let latency, let abandoned):
            "\(message.kind == .error ? "error \(message.errorName ?? "")" : "return") \(message.replySerial ?? 0)\(abandoned ? " abandoned" : "")\(latency >= .zero ? "" : " negative")"
        case .signal(let message, let routed): "signal \(message.member ?? "") \(routed ? "routed" : "unrouted")"
        case .emitted(let signal): "emitted \(signal.member)"
        case .incomingCall(let message): "incoming \(message.member ?? "")"
        case .answered(let message, _): "answered \(message.serial)"
        case .closed: "closed"
        }
    }

    @Test func callsRepliesErrorsAndSignalsInWireOrder() async throws {
        try await Simulator.with { bus in
            let recorder = Recorder()
            let connection = try await BusConnection.connect(to: bus.address, observer: recorder)
            let rule = MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: "org.blectl.Observed")
            connection.addSignalHandler(matching: [rule]) { _ in }
            try await connection.addMatch(rule)
            _ = try? await connection.call(BusConnection.busCall("GetNameOwner", [.string("org.blectl.Nobody")]))
            let other = try await BusConnection.connect(to: bus.address)
            defer { other.close() }
            _ = try await other.requestName("org.blectl.Observed")
            // A unicast signal no rule of ours asks for.
            try await other.emit([Signal(path: "/org/blectl/x", interface: "org.blectl.Test", member: "Hello",
                                         destination: connection.uniqueName, arguments: [.string("hi")])])
            // Our own round trip after both: its reply comes after the two signals.
            _ = try await connection.call(BusConnection.busCall("ListNames", []))
            connection.close()
            _ = await eventually { recorder.all.contains { if case .closed = $0 { true } else { false } } }

            let summary = recorder.all.map(Self.summary)
            // NameAcquired (unicast from the daemon) may come first; it is unrouted too.
            let relevant = summary.filter { !$0.hasPrefix("signal NameAcquired") }
            // ListNames may be sent before the signals arrive; its reply comes after them.
            #expect(relevant.filter { $0 != "call 4 ListNames" } == [
                "connected ok",
                "call 2 AddMatch", "return 2",
                "call 3 GetNameOwner", "error org.freedesktop.DBus.Error.NameHasNoOwner 3",
                "signal NameOwnerChanged routed", "signal Hello unrouted",
                "return 4",
                "closed",
            ], "\(summary)")
            #expect(relevant.firstIndex(of: "call 4 ListNames").map { $0 > 4 } == true, "\(summary)")
            // Times never go back.
            let times = recorder.events.withLock { $0.map(\.1) }
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
        }
    }

    @Test func aReplyToACallGivenUpOnIsReportedAbandoned() async throws {
        try await Simulator.with { bus in
            let recorder = Recorder()
            let connection = try await BusConnection.connect(to: bus.address, observer: recorder)
            defer { connection.close() }
            // Sent and cancelled in one turn of the queue: the reply cannot come in between.
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                connection.queue.async {
                    let pending = connection.send(BusConnection.busCall("ListNames", [])) { _ in }
                    pending.cancel()
                    done.resume()
                }
            }
            _ = try await connection.call(BusConnection.busCall("GetId", []))
            let summary = recorder.all.map(Self.summary).filter { !$0.hasPrefix("signal") }
            // The abandoned reply may come before or after GetId is sent.
            #expect(summary.prefix(2) == ["connected ok", "call 2 ListNames"], "\(summary)")
            #expect(Set(summary.dropFirst(2)) == ["call 3 GetId", "return 2 abandoned", "return 3"], "\(summary)")
            #expect(summary.count == 5, "\(summary)")
        }
    }

    @Test func noObserverNoTimes() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            _ = try await connection.call(BusConnection.busCall("ListNames", []))
            #expect(connection.tracedCallCount == 0)
        }
    }
}

