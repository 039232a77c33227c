// The README's peripheral example (Examples/BatteryPeripheral), run against the simulator
// with its central: the level read and notified as it drains, and nothing left registered.

import Foundation
import SimulatorHarness
import Testing

@Suite("Examples/BatteryPeripheral")
struct BatteryPeripheralExampleTests {
    /// `battery-peripheral`, built beside the blectl under test.
    static let path = URL(fileURLWithPath: BlectlBinary.path).deletingLastPathComponent().appendingPathComponent("battery-peripheral").path

    @Test func theCentralReadsAndIsNotifiedThenNothingIsLeft() async throws {
        try await Sim.with { sim in
            let simulator = sim.simulator
            // 10 s: room for a loaded machine to connect and read before the example ends.
            let process = try await offThread { try simulator.launch(Self.path, ["10"]) }
            #expect(await process.stdoutContains("serving at /org/blectl/application1"), "\(process.currentStderr)")
            try await simulator.centralConnect()
            let read = try await simulator.centralRead("2a19")
            let level = try #require(read.value.flatMap { Int($0, radix: 16) })
            #expect((90...100).contains(level), "\(read)")
            _ = try await simulator.centralSubscribe("2a19")
            #expect(try await eventually { try await !simulator.centralState().notifications.isEmpty })
            let notified = try #require(try await simulator.centralState().notifications.first.flatMap { Int($0.value, radix: 16) })
            #expect(notified < level)
            try await simulator.centralDisconnect()
            let result = try await process.finish(timeout: .seconds(30))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("read by C0:FF:EE:00:CE:01: [\(level)]"), "\(result.stdout)")
            #expect(result.stdout.hasSuffix("unregistered\n"), "\(result.stdout)")
            try await sim.expectClean()
        }
    }
}
