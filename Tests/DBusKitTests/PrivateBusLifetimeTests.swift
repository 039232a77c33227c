import Foundation
import SimulatorHarness
import Testing

/// A private bus a test keeps past its end (in a static, or leaked) does not outlive the test
/// process: its dbus-daemon, reparented to init, would otherwise hold every descriptor it
/// inherited (a lock a script holds around `make test`, say) until killed by hand.
@Suite struct PrivateBusLifetimeTests {
    static let pidFileVariable = "BLECTL_TEST_KEPT_BUS_PIDFILE"

    @Test func aBusKeptPastTheEndDiesWithTheTestProcess() async throws {
        if let pidFile = ProcessInfo.processInfo.environment[Self.pidFileVariable] {
            // The inner run: a bus never released; its daemon's pid for the outer run.
            let bus = try await PrivateBus.start()
            _ = Unmanaged.passRetained(bus)
            try String(bus.pid).write(toFile: pidFile, atomically: true, encoding: .utf8)
            return
        }
        // The outer run: this test alone, in a test process of its own that then exits.
        let pidFile = NSTemporaryDirectory() + "blectl-kept-bus-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let testRunner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let inner = try runChild(testRunner, ["--testing-library", "swift-testing", "--filter", "aBusKeptPastTheEndDiesWithTheTestProcess"],
                                 environment: ProcessInfo.processInfo.environment.merging([Self.pidFileVariable: pidFile]) { $1 },
                                 timeout: .seconds(60))
        #expect(inner.status == 0, "\(inner.stdout)\(inner.stderr)")
        let pid = try #require(Int32(try String(contentsOfFile: pidFile, encoding: .utf8)))
        // Gone, or a zombie left for init to reap: not running (SIGKILL takes effect at once,
        // but is delivered asynchronously).
        let ended = await eventually(within: .seconds(5)) { !isRunning(pid) }
        if !ended { kill(pid, SIGKILL) }
        #expect(ended, "the inner run's dbus-daemon (pid \(pid)) outlived it")
    }

    private func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let state = stat.split(separator: ")").last?.split(separator: " ").first else { return false }
        return state != "Z" && state != "X"
    }
}
