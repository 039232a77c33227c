// `blectl write --file` usage errors: standard input closed, a file that cannot be opened,
// --file without --without-response; 64, and nothing sent on the bus.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension WriteFileTests {
    /// `--file -` with standard input closed (`<&-`): a usage error before anything goes on
    /// the bus (descriptor 0 was taken by blectl's own event loop and read as the input: 70).
    @Test("usage: --file - with standard input closed is 64, nothing sent on the bus")
    func closedStandardInput() async throws {
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let script = #"exec "$0" write "$1" "$2" --without-response --file - <&-"#
            let simulator = sim.simulator
            let r = try await offThread { simulator.run("/bin/bash", ["-c", script, BlectlBinary.path, Self.echo, Self.sink], timeout: .seconds(30)) }
            #expect(r.status == 64, "\(r)")
            #expect(r.stdout == "")
            #expect(r.stderr.hasPrefix("Error: Cannot read '--file -': standard input is closed\n"), "\(r.stderr)")
            try #expect(await sim.calls().isEmpty)
        }
    }

    /// Bad input: the plain usage error (as for every usage error), and nothing on the bus at
    /// all (it was a JSON error after GetManagedObjects).
    @Test("usage: a file that cannot be opened is 64, plain text, nothing sent on the bus")
    func unreadableFile() async throws {
        try await Sim.with(faults: ["echo_device": "1"]) { sim in
            let directory = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
            for (path, reason) in [("/nonexistent/blectl-input", "No such file or directory"), (directory, "it is a directory")] {
                let run = await sim.blectl(["write", Self.echo, Self.sink, "--without-response", "--file", path])
                #expect(run.status == 64, "\(run)")
                #expect(run.stdout == "")
                #expect(run.stderr.hasPrefix("Error: Cannot read '--file' '\(path)': \(reason)\n"), "\(run)")
                #expect(run.stderr.contains("See 'blectl write --help' for more information."))
            }
            try #expect(await sim.calls().isEmpty)
        }
    }

    @Test("usage: --file needs --without-response")
    func needsWithoutResponse() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["write", Self.echo, Self.sink, "--file", "-"])
            #expect(run.status == 64)
            #expect(run.stdout == "")
            #expect(run.stderr.hasPrefix("Error: '--file' needs '--without-response'"))
            #expect(run.stderr.contains("See 'blectl write --help' for more information."))
        }
    }
}
