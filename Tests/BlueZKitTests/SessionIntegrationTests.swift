import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// The library against the simulated BlueZ on a private bus.
@Suite struct SessionIntegrationTests {
    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!

    @Test func disconnectFailsEveryPendingOperationAtOnce() async throws {
        try await Simulator.with(faults: ["read_never_answers": "true", "disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.probe, on: adapter, timeout: .seconds(20))
            let outcomes: [String] = try await device.withConnection(timeout: .seconds(20)) { connected in
                let battery = try await connected.service(.batteryService, timeout: .seconds(10))
                let info = try await connected.service(.deviceInformation, timeout: .seconds(10))
                let level = try connected.characteristic(.batteryLevel, in: battery)
                let firmware = try connected.characteristic(.firmwareRevision, in: info)
                return await withTaskGroup(of: String.self) { group in
                    for characteristic in [level, firmware] {
                        group.addTask {
                            do {
                                _ = try await connected.read(characteristic, timeout: .seconds(60))
                                return "value"
                            } catch let error as BLEError {
                                if case .disconnected(let op, _) = error { return "disconnected:\(op.kind.rawValue):\(op.characteristic!.shortString)" }
                                return "\(error)"
                            } catch { return "\(error)" }
                        }
                    }
                    // Once both reads are pending in BlueZ (the simulator never answers), drop the link.
                    let pending = (try? await sim.waitForState(timeout: .seconds(30)) {
                        $0.pendingGATT.map(\.op) == ["ReadValue", "ReadValue"]
                    }) ?? false
                    #expect(pending, "the two reads never pending")
                    try? await device.disconnect(timeout: .seconds(30))
                    return await group.reduce(into: []) { $0.append($1) }.sorted()
                }
            }
            // Disconnected, not timed out: the reads' own 60 s limit played no part.
            #expect(outcomes == ["disconnected:read:2a19", "disconnected:read:2a26"])
            #expect(session.watcherCount == 0)
            // Reply handlers are removed on the connection's queue, just after the outcomes.
            #expect(await eventually { session.connection.registeredReplyHandlerCount == 0 })
        }
    }

    @Test func scanReportsOnlyDevicesSeenAndLeavesNothingBehind() async throws {
        try await Simulator.with(faults: ["cached_devices": "true"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            #expect(adapter.knownDevices.map(\.address.description).contains("C0:FF:EE:00:00:A1"))
            let seen = try await adapter.withDiscovery(filter: DiscoveryFilter(), setupTimeout: .seconds(20)) { stream in
                var addresses = Set<String>()
                for try await batch in stream {
                    for advertisement in batch { addresses.insert(advertisement.address.description) }
                    if addresses.contains("C0:FF:EE:00:00:05") { break }
                }
                return addresses
            }
            #expect(seen.contains("C0:FF:EE:00:00:01"))
            #expect(!seen.contains("C0:FF:EE:00:00:A1"))
            #expect(!seen.contains("C0:FF:EE:00:00:A2"))
            #expect(session.watcherCount == 0)
            // Stopped on return, or (a start whose reply this loaded process read late) as soon
            // as the start's reply is read: observed, not assumed.
            #expect(try await eventually(every: .milliseconds(50)) { try await sim.state().discoverySessions.isEmpty })
            #expect(await eventually { session.connection.registeredReplyHandlerCount == 0 })
        }
    }
}
