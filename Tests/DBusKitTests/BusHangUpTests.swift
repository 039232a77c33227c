import Testing
@testable import DBusKit
import SimulatorHarness

/// The bus connection hangs up (the dbus-daemon is SIGKILLed): every call fails at once
/// with ``BusError/disconnected``, the calls pending then and the calls made afterwards,
/// whatever their own timeout.
@Suite struct BusHangUpTests {
    /// The calls' own timeout: a call that fails with `disconnected` failed because the bus
    /// went away, not at this timeout (which would be `timedOut`). That outcome, not a clock,
    /// tells "at once" from "at its timeout": a 10 s guard on the clock failed under
    /// `make test-tsan` when the cooperative pool was busy with other tests for longer than
    /// that, and the guard's task ran before the call's (CI, GetNameOwner after the hang-up).
    static let callTimeout: Duration = .seconds(60)
    /// Only against a hang of the test itself (a call without a timeout that never ends):
    /// past the calls' own timeout, so never in the way of their outcome.
    static let hangLimit: Duration = .seconds(90)

    /// `body`'s outcome: "reply", the BusError's description, or "still waiting after
    /// <hangLimit>" (then `body` is cancelled). The limit counts from `timedFrom` once it is
    /// set (the moment the bus is killed: what comes before may take any time a loaded
    /// machine needs), from now without it.
    static func outcome(timedFrom start: Lock<ContinuousClock.Instant?>? = nil,
                        _ body: @escaping @Sendable () async throws -> Message) async -> String {
        let began = ContinuousClock.now
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                do { _ = try await body(); return "reply" }
                catch let error as BusError { return "\(error)" }
                catch { return "other error: \(error)" }
            }
            group.addTask {
                while true {
                    let from: ContinuousClock.Instant? = if let start { start.withLock { $0 } } else { began }
                    if let from, ContinuousClock.now >= from + hangLimit { return nil }
                    do { try await Task.sleep(for: .milliseconds(20)) } catch { return nil }
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? "still waiting after \(hangLimit)"
        }
    }

    static let disconnected = "\(BusError.disconnected)"

    /// A GATT read the simulator never answers (read_never_answers, on the preconnected
    /// blesim GattBattery's Battery Level).
    static let unansweredRead = MethodCall(
        destination: "org.bluez", path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_04/service000f/char0010",
        interface: "org.bluez.GattCharacteristic1", member: "ReadValue", arguments: [.stringVariantDictionary([:])])

    @Test func aCallPendingWhenTheBusDiesAndEveryCallAfterItFailAtOnce() async throws {
        let sim = try await Simulator.start(faults: ["preconnected": "C0:FF:EE:00:00:04", "read_never_answers": "1"])
        defer { sim.stop() }
        let connection = try await BusConnection.connect(to: sim.address)
        defer { connection.close() }
        let lost = Lock(0)
        _ = connection.onConnectionLost { lost.withLock { $0 += 1 } }

        // Timed from the kill: reaching the simulator and its State answering it are not.
        let killed = Lock<ContinuousClock.Instant?>(nil)
        async let pending = Self.outcome(timedFrom: killed) { try await connection.call(Self.unansweredRead, timeout: Self.callTimeout) }
        #expect(try await offThread { try sim.waitForState { $0.pendingGATT.contains { $0.op == "ReadValue" } } })
        let busPID = try sim.busProcessID()
        killed.withLock { $0 = .now }
        try await sim.killBus(busPID: busPID)
        #expect(await pending == Self.disconnected)
        #expect(lost.withLock { $0 } == 1)

        // The connection is known to be lost: calls made now fail at once, not at their timeout.
        #expect(await Self.outcome { try await connection.call(BusConnection.busCall("ListNames", []), timeout: Self.callTimeout) }
                == Self.disconnected)
        #expect(await Self.outcome { try await connection.call(Self.unansweredRead, timeout: Self.callTimeout) } == Self.disconnected)
        #expect(await Self.outcome { try await connection.call(BusConnection.busCall("ListNames", [])) } == Self.disconnected,
                "a call without a timeout")
        #expect(connection.registeredReplyHandlerCount == 0)
    }

    @Test func aBusThatDiesWhileTheConnectionIsIdleFailsTheNextCallAtOnce() async throws {
        let sim = try await Simulator.start()
        defer { sim.stop() }
        let connection = try await BusConnection.connect(to: sim.address)
        defer { connection.close() }
        let lost = Lock(0)
        _ = connection.onConnectionLost { lost.withLock { $0 += 1 } }
        _ = try await connection.call(BusConnection.busCall("ListNames", []), timeout: .seconds(10))

        try await sim.killBus()
        // The hang-up is noticed by itself (nothing was being sent or awaited).
        let deadline = ContinuousClock.now + Self.hangLimit
        while lost.withLock({ $0 }) == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(lost.withLock { $0 } == 1, "the hang-up was not noticed")

        #expect(await Self.outcome { try await connection.call(BusConnection.busCall("GetNameOwner", [.string("org.bluez")]),
                                                               timeout: Self.callTimeout) } == Self.disconnected)
        await #expect(throws: BusError.disconnected) {
            try await connection.addMatch(MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager",
                                                    member: "InterfacesAdded"), timeout: .seconds(5))
        }
        #expect(connection.registeredReplyHandlerCount == 0)
    }
}
