// Pairing through the library against the simulator (sim/README.md, Pairing): a
// characteristic readable only once paired, Device.withPairing with and without a passkey.

import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

@Suite struct PairingTests {
    static let secure = BluetoothAddress("C0:FF:EE:00:00:07")!
    static let service = BluetoothUUID("5ec00001-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!
    static let characteristic = BluetoothUUID("5ec00002-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!

    /// Reads the secret, and returns once the link is down (so that pairing next starts
    /// from a device that is not connected).
    static func readSecret(_ device: Device) async throws -> [UInt8] {
        try await device.withConnection(timeout: .seconds(20), disconnectTimeout: .seconds(4)) { connected in
            let service = try await connected.service(Self.service, timeout: .seconds(10))
            return try await connected.read(try connected.characteristic(Self.characteristic, in: service), timeout: .seconds(10))
        }
    }

    @Test("before pairing a read is not permitted (77 not_permitted, naming blectl pair); after, it reads")
    func secureCharacteristic() async throws {
        let sim = try await Simulator.start(faults: ["secure_device": "1", "disconnect_delay_ms": "100"])
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.secure, on: adapter, timeout: .seconds(20))
        do {
            _ = try await Self.readSecret(device)
            Issue.record("read before pairing succeeded")
        } catch let error as BLEError {
            let operation = BLEOperation(.read, address: Self.secure, service: Self.service, characteristic: Self.characteristic)
            #expect(error == .notPermitted(operation, dbusError: BlueZ.Error.notPermitted, message: "Not paired"))
            #expect(error.description.contains("try 'blectl pair C0:FF:EE:00:00:07'"), "\(error)")
        }
        #expect(device.pairingState == PairingState(paired: false, bonded: false, trusted: false))
        let outcome = try await device.withPairing(agent: Agent(devices: [device.path]), timeout: .seconds(20)) { $0 }
        #expect(outcome == .paired)
        try #expect(await device.readPairingState(timeout: .seconds(30)) == PairingState(paired: true, bonded: true, trusted: false))
        #expect(Array(try await Self.readSecret(device)) == Array("blesim secret".utf8))
        // Paired already: nothing is sent.
        let again = try await device.withPairing(agent: Agent(), timeout: .seconds(20)) { $0 }
        #expect(again == .alreadyPaired)
        try #expect(await sim.calls().filter { $0.member == "Pair" }.count == 1)
        let left = try await sim.leftovers()
        #expect(left == [])
    }

    @Test("a link found up that goes down while Pair is on its way: the link Pair brings up is disconnected at the end")
    func linkFoundUpGoesDownBeforePairIsHandled() async throws {
        let sim = try await Simulator.start(faults: ["secure_device": "1", "pair_held": "1"])
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.secure, on: adapter, timeout: .seconds(20))
        // Up when withPairing looks: a link it found, not its own.
        #expect(try await device.connect(timeout: .seconds(20)) == .connectedByUs)
        let pairing = Task { try await device.withPairing(agent: Agent(devices: [device.path]), timeout: .seconds(30)) { $0 } }
        // Pair reached bluetoothd, which has not looked at the device yet; then the link drops.
        let address = Self.secure.description
        try #expect(await offThread { try sim.waitForState { $0.pairings?.map(\.stage) == ["held"] } })
        try await sim.dropLink(address: address)
        try await device.waitUntilDisconnected(timeout: .seconds(20), operation: device.operation(.pair))
        // Handled now: Pair brings a link up, pairs over it and answers.
        try await sim.setFault("pair_held", "0")
        #expect(try await pairing.value == .paired)
        // That link was Pair's: disconnected before withPairing returned.
        let calls = try await sim.calls().map(\.member).filter { ["Connect", "Pair", "Disconnect"].contains($0) }
        #expect(calls == ["Connect", "Pair", "Disconnect"])
        let left = try await sim.leftovers(within: .seconds(10))
        #expect(left == [])
    }

    @Test("a passkey: the agent is asked and types it; a wrong one fails with authenticationFailed")
    func passkey() async throws {
        let sim = try await Simulator.start(faults: ["secure_device": "1", "disconnect_delay_ms": "100"])
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        let device = try await Device.find(Self.secure, on: adapter, timeout: .seconds(20))
        let wrong = Agent(passkey: Passkey(111_111), devices: [device.path])
        do {
            _ = try await device.withPairing(agent: wrong, timeout: .seconds(20)) { _ in Issue.record("paired with a wrong passkey") }
        } catch let error as BLEError {
            #expect(error == .authenticationFailed(BLEOperation(.pair, address: Self.secure),
                                                   dbusError: BlueZ.Error.authenticationFailed, message: "Authentication Failed"))
        }
        #expect(wrong.requests.map(\.method) == ["RequestPasskey"])
        #expect(wrong.requests.map(\.accepted) == [true])
        let left = try await sim.leftovers()
        #expect(left == [])
        let right = Agent(passkey: Passkey(123_456), devices: [device.path])
        let state = try await device.withPairing(agent: right, timeout: .seconds(20)) { _ in
            try await device.setTrusted(true, timeout: .seconds(30))
            return try await device.readPairingState(timeout: .seconds(30))
        }
        #expect(state == PairingState(paired: true, bonded: true, trusted: true))
        #expect(right.requests.map(\.method) == ["RequestPasskey"])
        let leftAfterPairing = try await sim.leftovers()
        #expect(leftAfterPairing == [])
        // Removed: gone from BlueZ with its pairing; removing it again: not found.
        try await device.remove(timeout: .seconds(10))
        #expect(device.pairingState == nil)
        await #expect(throws: BLEError.deviceNotFound(Self.secure)) { try await device.remove(timeout: .seconds(10)) }
    }
}
