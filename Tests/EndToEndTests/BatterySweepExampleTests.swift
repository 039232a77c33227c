// The README's fleet example (Examples/BatterySweep), run against the simulator: every
// device in the list gets its line, one that cannot be read among them, and nothing is
// left connected or discovering.

import Foundation
import SimulatorHarness
import Testing

@Suite("Examples/BatterySweep")
struct BatterySweepExampleTests {
    /// `battery-sweep`, built beside the blectl under test.
    static let path = URL(fileURLWithPath: BlectlBinary.path).deletingLastPathComponent().appendingPathComponent("battery-sweep").path

    @Test func everyDeviceGetsItsLineAndNothingIsLeft() async throws {
        try await Sim.with { sim in
            let simulator = sim.simulator
            // :02 has no battery that BlueZKit reads (its level is in a vendor protocol).
            let arguments = ["C0:FF:EE:00:00:01", "C0:FF:EE:00:00:03", "C0:FF:EE:00:00:04", "C0:FF:EE:00:00:02"]
            let r = try await offThread { simulator.run(Self.path, arguments, timeout: .seconds(60)) }
            #expect(r.status == 1, "\(r)")
            let lines = Set(r.stdout.split(separator: "\n").map(String.init))
            #expect(lines.isSuperset(of: ["C0:FF:EE:00:00:01 87 % battery1", "C0:FF:EE:00:00:03 42 % battery1",
                                          "C0:FF:EE:00:00:04 55 % gatt"]), "\(r.stdout)")
            #expect(lines.contains { $0.hasPrefix("C0:FF:EE:00:00:02 error: ") }, "\(r.stdout)")
            #expect(lines.count == 4)
            let clean = try await eventually(within: .seconds(10)) {
                let state = try await sim.state()
                return state.connections.isEmpty && !state.discovering && state.discoverySessions.isEmpty
            }
            #expect(clean, "left connected or discovering")
        }
    }
}
