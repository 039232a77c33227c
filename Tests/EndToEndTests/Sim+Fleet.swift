// The simulator's fleet controls for the end-to-end tests, off the cooperative pool as the
// other Sim calls (sim/README.md, "Fleets"; Simulator+Fleet.swift).

import SimulatorHarness

extension Sim {
    /// Gives device `address` a fault of its own (abort-once, drop-once, needs-pairing,
    /// absent, silent, vanish-after-connect), or takes it away (`on: false`).
    func setDeviceFault(_ address: String, _ kind: String, on: Bool = true) async throws {
        let simulator = simulator
        try await offThread { try simulator.setDeviceFault(address: address, kind: kind, on: on) }
    }

    /// One device of the world: in the tree, advertising, connecting, connected, its faults.
    func deviceState(_ address: String) async throws -> SimDeviceState {
        let simulator = simulator
        return try await offThread { try simulator.deviceState(address: address) }
    }
}
