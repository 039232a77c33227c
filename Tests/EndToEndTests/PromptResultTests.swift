// A result is printed the moment it is known: get-battery and get-version put their line on
// stdout (a pipe) while blectl still waits for BlueZ to answer its Disconnect (2 s timer on a
// real bluetoothd), not after (issue: results held until the Disconnect reply).

import SimulatorHarness
import Testing

@Suite struct PromptResultTests {
    @Test("the result line is on the pipe while the link is still up, before BlueZ answers the Disconnect", arguments: [
        ["get-battery", World.probe],
        ["get-version", World.probe],
        ["get-battery", World.vendor] + World.vendorOptions,
        ["get-version", World.vendor] + World.vendorOptions,
        ["connect", World.probe],
    ])
    func resultBeforeDisconnectReply(_ arguments: [String]) async throws {
        // BlueZ answers Disconnect 3 s after it is asked, once the link is down (within
        // blectl's 4 s wait for that answer).
        try await Sim.with(faults: ["disconnect_delay_ms": "3000"], fastDisconnect: false) { sim in
            let process = try await sim.launch(arguments)
            #expect(await process.stdoutContains("\"address\"", within: .seconds(20)), "no result line")
            // Observed in this order: the line, then the link still up. Before the fix the
            // line came only after BlueZ had answered the Disconnect, the link gone.
            let state = try await sim.state()
            #expect(state.connections.map(\.address) == [arguments[1]], "the line came after the link was down")
            let result = try await process.finish(timeout: .seconds(20))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.split(separator: "\n").count == 1)
        }
    }
}
