// A result is printed the moment it is known: get-battery and get-version put their line on
// stdout (a pipe) while blectl still waits for BlueZ to answer its Disconnect (2 s timer on a
// real bluetoothd), not after (issue: results held until the Disconnect reply).

import SimulatorHarness
import Testing

@Suite struct PromptResultTests {
    @Test("the result line is on the pipe while the Disconnect is still pending", arguments: [
        ["get-battery", World.probe],
        ["get-version", World.probe],
        ["get-battery", World.vendor] + World.vendorOptions,
        ["get-version", World.vendor] + World.vendorOptions,
        ["connect", World.probe],
    ])
    func resultBeforeDisconnectReply(_ arguments: [String]) async throws {
        // BlueZ answers Disconnect only after 30 s here: blectl gives up waiting after its
        // own limit (4 s), so while the Disconnect is pending blectl is still running.
        try await Sim.with(faults: ["disconnect_delay_ms": "30000"], fastDisconnect: false) { sim in
            let process = try await sim.launch(arguments)
            #expect(await process.stdoutContains("\"address\"", within: .seconds(20)), "no result line")
            // Observed in this order: the line, then blectl still running, then BlueZ still
            // disconnecting. Before the fix the line came only as blectl ended.
            let running = process.poll() == nil
            let state = try await sim.state()
            #expect(running, "the line came only at exit")
            #expect(state.connections.map(\.address) == [arguments[1]])
            #expect(state.connections.first?.disconnecting == true, "\(state.connections)")
            let result = try await process.finish(timeout: .seconds(20))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.split(separator: "\n").count == 1)
        }
    }
}
