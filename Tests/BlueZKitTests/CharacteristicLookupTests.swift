import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// ``ConnectedDevice/characteristics(_:inService:timeout:)`` against a GATT tree that changes
/// (a Service Changed: the service's objects removed, exported again at new paths): none
/// found counts as absent only after ``ConnectedDevice/serviceSettleTime`` of quiet, a
/// timeout that comes first is a timeout (found by this session's second breaker trial: a
/// short --timeout answered 3 "no characteristic" in the middle of the change).
@Suite struct CharacteristicLookupTests {
    /// Connects to the echo device of a simulator started with `faults` and runs `body`.
    static func withEcho<T: Sendable>(
        faults: [String: String] = [:], _ body: (Simulator, ConnectedDevice) async throws -> T
    ) async throws -> T {
        try await AcquireTests.withEcho(faults: faults) { sim, connected, _, _ in try await body(sim, connected) }
    }

    @Test func aServiceExportedAgainIsWaitedForAndItsCharacteristicFoundAtItsNewPath() async throws {
        try await Self.withEcho { sim, connected in
            let before = try #require(try await connected.characteristics(AcquireTests.sink, timeout: .seconds(5)).first)
            try await sim.serviceChanged(address: AcquireTests.echo.description, service: AcquireTests.echoService.description)
            // The objects go 20 ms after the control call and come back 100 ms later (sim/README.md).
            let gone = try await connected.session.wait(for: BLEOperation(.serviceLookup, address: AcquireTests.echo),
                                                        timeout: .seconds(5)) { [path = before.path] cache, _ in
                cache[path, BlueZ.gattCharacteristicInterface] == nil ? .done(true) : .keepWaiting
            }
            #expect(gone)
            let after = try await connected.characteristics(AcquireTests.sink, inService: AcquireTests.echoService, timeout: .seconds(5))
            #expect(after.count == 1)
            #expect(after.first?.path != before.path && after.first?.uuid == AcquireTests.sink, "\(after)")
        }
    }

    @Test func aTimeoutBeforeTheTreeSettledIsATimeoutNotAnAbsence() async throws {
        try await Self.withEcho(faults: ["service_changed_removes": "1"]) { sim, connected in
            let before = try #require(try await connected.characteristics(AcquireTests.sink, timeout: .seconds(5)).first)
            try await sim.serviceChanged(address: AcquireTests.echo.description, service: AcquireTests.echoService.description)
            _ = try await connected.session.wait(for: BLEOperation(.serviceLookup, address: AcquireTests.echo),
                                                 timeout: .seconds(5)) { [path = before.path] cache, _ in
                cache[path, BlueZ.gattCharacteristicInterface] == nil ? .done(true) : .keepWaiting
            }
            // 200 ms is less than the settle time: whether the service comes back is not known yet.
            do {
                let found = try await connected.characteristics(AcquireTests.sink, timeout: .milliseconds(200))
                Issue.record("answered \(found) before the tree settled")
            } catch let error as BLEError {
                guard case .timedOut(let operation) = error else { Issue.record("\(error)"); return }
                #expect(operation.kind == .serviceLookup)
            }
            // With time to settle, the service removed for good is absent.
            let settled = try await connected.characteristics(AcquireTests.sink, timeout: .seconds(5))
            #expect(settled.isEmpty)
        }
    }
}
