// A StartDiscovery taken as begun without its reply (BlueZ 5.66 may never answer one while
// the adapter discovers for another client) that is then refused: the scan ends with that
// refusal instead of reporting success on another client's discovery.

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite struct DiscoveryStartTests {
    @Test func aStartRefusedAfterTheScanWentOnEndsTheScanWithTheRefusal() async throws {
        let held = Lock<Message?>(nil)
        let fake = try await FakeBlueZ.start(answer: { call in
            guard call.member == "StartDiscovery" else { return .values([]) }
            held.withLock { $0 = call }
            return .noReply
        })
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let adapter = Adapter(session: session, path: FakeBlueZ.adapter)
        let scanning = Lock(false)
        let scan = Task { () -> String in
            do {
                try await adapter.withDiscovery(filter: DiscoveryFilter(), setupTimeout: .seconds(30)) { stream in
                    scanning.withLock { $0 = true }
                    for try await _ in stream {}
                }
                return "ended normally"
            } catch let error as BLEError {
                guard case .failed(_, let name, let message) = error else { return "\(error)" }
                return "failed \(name) \(message)"
            } catch {
                return "\(error)"
            }
        }
        #expect(await eventually { held.withLock { $0 } != nil }, "StartDiscovery never sent")
        // The adapter discovers (another client's session); our start stays unanswered.
        try await fake.emit([FakeBlueZ.propertiesChanged(FakeBlueZ.adapter, BlueZ.adapterInterface, ["Discovering": .boolean(true)])])
        #expect(await eventually { scanning.withLock { $0 } }, "the scan did not go on without the reply")
        fake.connection.reply(to: held.withLock { $0 }!, .error(name: BlueZ.Error.failed, message: "Operation failed"))
        // A hang detector: a scan still running after 20 s is stopped (and the test fails).
        let stoppedByWatchdog = Lock(false)
        let watchdog = Task {
            try await Task.sleep(for: .seconds(20))
            stoppedByWatchdog.withLock { $0 = true }
            scan.cancel()
        }
        let outcome = await scan.value
        watchdog.cancel()
        #expect(!stoppedByWatchdog.withLock { $0 }, "the refusal did not end the scan")
        #expect(outcome == "failed org.bluez.Error.Failed Operation failed")
        // Nothing was started in BlueZ, so nothing is stopped.
        #expect(!fake.calls.withLock { $0.map(\.member) }.contains("StopDiscovery"))
    }
}
