import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// A session opened ahead (`Session.Opening`): the connect, `Hello`, the match rules and
/// GetManagedObjects done before anyone awaits it; given once; closed when given up or dropped.
@Suite struct SessionOpeningTests {
    /// Records the bus events of the session's connection, with their times.
    final class Recorder: SessionObserver {
        let events = Lock<[(BusEvent, ContinuousClock.Instant)]>([])
        func observe(_ event: BusEvent, at time: ContinuousClock.Instant) { events.withLock { $0.append((event, time)) } }

        var uniqueName: String? {
            events.withLock { events in
                events.lazy.compactMap { if case .connected(_, let name) = $0.0 { name } else { nil } }.first
            }
        }
        var closed: Bool { events.withLock { $0.contains { if case .closed = $0.0 { true } else { false } } } }
        /// The calls sent.
        var calls: Int { events.withLock { $0.count { if case .call = $0.0 { true } else { false } } } }
        /// The times replies arrived.
        var replyTimes: [ContinuousClock.Instant] {
            events.withLock { $0.compactMap { if case .reply = $0.0 { $0.1 } else { nil } } }
        }
    }

    /// The connection is closed: the observer says so and the bus no longer knows its name.
    static func expectClosed(_ recorder: Recorder, on sim: Simulator, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        #expect(await eventually { recorder.closed }, sourceLocation: sourceLocation)
        let name = try #require(recorder.uniqueName, sourceLocation: sourceLocation)
        let watcher = try await BusConnection.connect(to: sim.address)
        defer { watcher.close() }
        #expect(try await eventually { try await watcher.nameOwner(of: name) == nil }, sourceLocation: sourceLocation)
    }

    @Test func theSessionIsLoadedBeforeItIsAskedFor() async throws {
        try await Simulator.with { sim in
            let recorder = Recorder()
            let opening = Session.Opening(address: sim.address, observer: recorder)
            #expect(await eventually { opening.isSettled })
            let asked = ContinuousClock.now
            let session = try await Session.open(opening, timeout: .seconds(30))
            defer { session.close() }
            // The match rules, GetNameOwner and GetManagedObjects, all answered before the
            // session was asked for.
            let replies = recorder.replyTimes
            #expect(replies.count == Session.matchRules.count + 2, "\(replies)")
            #expect(replies.allSatisfy { $0 < asked })
            #expect(session.connection.uniqueName == recorder.uniqueName)
            // The cache holds what GetManagedObjects returned: the simulator's adapter.
            let adapter = try Adapter.present(in: session, named: nil)
            #expect(adapter.path == ObjectPath("/org/bluez/hci0"))
            #expect(try await session.connection.nameOwner(of: BlueZ.service) != nil)
        }
    }

    @Test func aSecondSessionFromOneOpeningConnectsAnew() async throws {
        try await Simulator.with { sim in
            let opening = Session.Opening(address: sim.address)
            let first = try await Session.open(opening, timeout: .seconds(30))
            defer { first.close() }
            let second = try await Session.open(opening, timeout: .seconds(30))
            defer { second.close() }
            #expect(first.connection.uniqueName != second.connection.uniqueName)
            #expect(try Adapter.present(in: second, named: nil).path == ObjectPath("/org/bluez/hci0"))
        }
    }

    @Test func givenUpAtTheTimeoutItsConnectionIsClosed() async throws {
        try await Simulator.with(faults: ["get_managed_objects_held": "true"]) { sim in
            let recorder = Recorder()
            let opening = Session.Opening(address: sim.address, observer: recorder)
            // Registered and loading before it is given up: the connect itself may take longer
            // than the timeout on a loaded machine, and an opening given up before `Hello` is
            // answered tells its observer of no connection to close.
            let calls = Session.matchRules.count + 2
            #expect(await eventually { recorder.calls == calls && recorder.replyTimes.count == calls - 1 })
            await #expect {
                _ = try await Session.open(opening, timeout: .milliseconds(300))
            } throws: { error in
                guard case .timedOut(let operation)? = error as? BLEError else { return false }
                return operation.kind == .bus
            }
            try await Self.expectClosed(recorder, on: sim)
        }
    }

    @Test func droppedUnusedItsConnectionIsClosed() async throws {
        try await Simulator.with { sim in
            let recorder = Recorder()
            var opening: Session.Opening? = Session.Opening(address: sim.address, observer: recorder)
            #expect(await eventually { opening?.isSettled == true })
            #expect(!recorder.closed)
            opening = nil
            #expect(await eventually { recorder.closed })
        }
    }

    @Test func droppedWhileItsLoadIsPendingItsConnectionIsClosed() async throws {
        // GetManagedObjects never answered: the load waits, its reply handlers registered on
        // the connection (before, they kept the opening, its session and the connection alive).
        try await Simulator.with(faults: ["get_managed_objects_held": "true"]) { sim in
            let recorder = Recorder()
            var opening: Session.Opening? = Session.Opening(address: sim.address, observer: recorder)
            let calls = Session.matchRules.count + 2
            #expect(await eventually { recorder.calls == calls && recorder.replyTimes.count == calls - 1 })
            #expect(opening?.isSettled == false)
            opening = nil
            try await Self.expectClosed(recorder, on: sim)
        }
    }

    @Test func aConnectThatFailedBeforeTheSessionWasAskedForIsReportedThen() async throws {
        let opening = Session.Opening(address: "unix:path=/nonexistent/blectl-test-bus")
        #expect(await eventually { opening.isSettled })
        await #expect {
            _ = try await Session.open(opening, timeout: .seconds(5))
        } throws: { error in
            guard case .unavailable(.busUnreachable, let operation, _)? = error as? BLEError else { return false }
            return operation?.kind == .bus
        }
    }
}
