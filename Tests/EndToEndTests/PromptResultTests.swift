// A result is printed the moment it is known: get-battery and get-version put their line on
// stdout (a pipe) while blectl still waits for BlueZ to answer its Disconnect (2 s timer on a
// real bluetoothd), not after (issue: results held until the Disconnect reply).

import SimulatorHarness
import Testing

@Suite struct PromptResultTests {
    @Test("the result line is on the pipe before the Disconnect is sent", arguments: [
        ["get-battery", World.probe],
        ["get-version", World.probe],
        ["get-battery", World.vendor] + World.vendorOptions,
        ["get-version", World.vendor] + World.vendorOptions,
        ["connect", World.probe],
    ])
    func resultBeforeDisconnectReply(_ arguments: [String]) async throws {
        // BlueZ answers Disconnect only after 30 s: it stays pending while we look.
        try await Sim.with(faults: ["disconnect_delay_ms": "30000"], fastDisconnect: false) { sim in
            let process = try await sim.launch(arguments)
            try #expect(await sim.waitForState(timeout: .seconds(20)) { $0.connections.first?.disconnecting == true }, "no Disconnect")
            // The line was written before the Disconnect was sent: it is on the pipe now,
            // while BlueZ has not answered (before, it came only after the answer or after
            // blectl gave up waiting for it, 4 s later).
            #expect(await process.stdoutContains("\"address\"", within: .seconds(2)), "no result line while the Disconnect is pending")
            let result = try await process.finish(timeout: .seconds(30))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.split(separator: "\n").count == 1)
        }
    }
}
