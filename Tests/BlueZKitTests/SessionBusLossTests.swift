import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// The bus connection hangs up under a session (the dbus-daemon is SIGKILLed): every
/// operation, started before or after, fails at once, and as what happened, a lost bus
/// (``Unavailability/busUnreachable(_:)``), not bluetoothd leaving, no adapter, or a timeout.
@Suite struct SessionBusLossTests {
    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!
    /// Far beyond what noticing a hang-up takes (a sanitizer run of the whole suite on two
    /// loaded cores has taken over 10 s), below the operations' own 60 s timeouts.
    static let hangLimit: Duration = .seconds(30)

    /// `body`'s result, or nil when it was still running after ``hangLimit`` (then cancelled).
    static func outcome<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async -> Result<T, any Error>? {
        await withTaskGroup(of: Result<T, any Error>?.self) { group in
            group.addTask {
                do { return .success(try await body()) } catch { return .failure(error) }
            }
            group.addTask {
                try? await Task.sleep(for: hangLimit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// As ``outcome(_:)``, with ``hangLimit`` counted from when `body` calls the `arm` it is
    /// given, not from its start: what `body` does before (connecting, on a live bus) may take
    /// any time a loaded machine needs; only what follows is timed.
    static func outcome<T: Sendable>(
        armedBy body: @escaping @Sendable (_ arm: @escaping @Sendable () -> Void) async throws -> T
    ) async -> Result<T, any Error>? {
        let armed = Lock<ContinuousClock.Instant?>(nil)
        return await withTaskGroup(of: Result<T, any Error>?.self) { group in
            group.addTask {
                do { return .success(try await body { armed.withLock { $0 = .now } }) } catch { return .failure(error) }
            }
            group.addTask {
                while true {
                    if let at = armed.withLock({ $0 }), ContinuousClock.now >= at + hangLimit { return nil }
                    do { try await Task.sleep(for: .milliseconds(20)) } catch { return nil }
                }
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Records an issue unless `result` is a failure with ``Unavailability/busLost``.
    static func expectLostBus<T>(_ result: Result<T, any Error>?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        switch result {
        case nil: Issue.record("\(what): still waiting \(hangLimit) after the bus died", sourceLocation: sourceLocation)
        case .failure(BLEError.unavailable(.busLost, _, _))?: break
        case .failure(let error)?: Issue.record("\(what): \(error) (\(type(of: error))), not a lost bus", sourceLocation: sourceLocation)
        case .success(let value)?: Issue.record("\(what): succeeded with \(value) on a dead bus", sourceLocation: sourceLocation)
        }
    }

    /// Waits (up to ``hangLimit``) until the session has seen the loss: the adapter is no longer usable.
    static func waitForLoss(of session: Session) async throws {
        let deadline = ContinuousClock.now + hangLimit
        while (try? Adapter.ready(in: session, named: nil)) != nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(throws: BLEError.self, "the session still has its adapter after the bus died") {
            try Adapter.ready(in: session, named: nil)
        }
    }

    @Test func anOperationStartedAfterTheBusHungUpFailsAtOnceAsALostBus() async throws {
        let sim = try await Simulator.start(faults: ["disconnect_delay_ms": "100"])
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        try await sim.killBus()
        try await Self.waitForLoss(of: session)

        Self.expectLostBus(await Self.outcome { try await Device.find(Self.probe, on: adapter, timeout: .seconds(60)).address },
                           "Device.find")
        Self.expectLostBus(await Self.outcome { try await Device(adapter: adapter, address: Self.probe).connect(timeout: .seconds(60)) },
                           "connect")
        #expect(session.watcherCount == 0)
    }

    @Test func aConnectedDeviceFailsEveryOperationAtOnceAsALostBus() async throws {
        let sim = try await Simulator.start(faults: ["disconnect_delay_ms": "100"])
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.probe, on: adapter, timeout: .seconds(20))
        // Timed from the last read on: connecting and the checks before take what they take.
        let result = await Self.outcome { arm in
            try await device.withConnection(timeout: .seconds(20)) { connected -> [UInt8] in
                let battery = try await connected.service(.batteryService, timeout: .seconds(10))
                let level = try connected.characteristic(.batteryLevel, in: battery)
                #expect(try await connected.read(level, timeout: .seconds(30)) == [87])
                try await sim.killBus()
                try await Self.waitForLoss(of: session)
                // After the loss: a read and a notification setup, with long timeouts.
                Self.expectLostBus(await Self.outcome { try await connected.read(level, timeout: .seconds(60)) }, "read")
                Self.expectLostBus(await Self.outcome {
                    try await connected.withNotifications(level, setupTimeout: .seconds(60), onValue: { _ in }) { 0 }
                }, "notification setup")
                arm()
                return try await connected.read(level, timeout: .seconds(60))
            }
        }
        // withConnection's own clean-up (Disconnect on the dead bus) must not hold it either.
        Self.expectLostBus(result, "withConnection")
        #expect(session.watcherCount == 0)
    }
}
