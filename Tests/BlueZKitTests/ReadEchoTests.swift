import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

final class Collected: Sendable {
    private let values = Lock<[[UInt8]]>([])
    func append(_ value: [UInt8]) { values.withLock { $0.append(value) } }
    var all: [[UInt8]] { values.withLock { $0 } }

    /// Polls (every 5 ms, 10 s at most) until `value` has been collected; whether it was.
    func eventuallyContains(_ value: [UInt8]) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !all.contains(value) {
            if ContinuousClock.now >= deadline { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}

/// BlueZ signals a PropertiesChanged(Value) after every ReadValue, exactly like a
/// notification: our own reads must not be taken for notifications.
@Suite struct ReadEchoTests {
    @Test func ourOwnReadsAreNotTakenForNotifications() async throws {
        // Without the simulator's unsolicited status notification, every Value change is an
        // answer to a command or the echo of a read.
        try await Simulator.with(faults: ["response_readable": "true", "no_status_notification": "true",
                                      "disconnect_delay_ms": "100"]) { sim in
            let session = try await Session.open(address: sim.address, timeout: .seconds(30))
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(BluetoothAddress("C0:FF:EE:00:00:01")!, on: adapter, timeout: .seconds(20))
            let notified = Collected()
            let reads: [[UInt8]] = try await device.withConnection(timeout: .seconds(20)) { c in
                let service = try await c.service(BluetoothUUID("5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!, timeout: .seconds(10))
                let command = try c.characteristic(BluetoothUUID("5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!, in: service)
                let response = try c.characteristic(BluetoothUUID("5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!, in: service)
                return try await c.withNotifications(response, setupTimeout: .seconds(10), onValue: { notified.append($0) }) {
                    // Each read's echo follows its reply; BlueZ's signals and replies keep their
                    // order, so an answer notified after a read comes after that read's echo.
                    var values = [try await c.read(response, timeout: .seconds(10))]
                    try await c.write(command, [0x01], timeout: .seconds(10))
                    try #require(await notified.eventuallyContains([0x81, 1, 4, 2]), "no answer to 0x01: \(notified.all)")
                    values.append(try await c.read(response, timeout: .seconds(10)))
                    try await c.write(command, [0x02], timeout: .seconds(10))
                    try #require(await notified.eventuallyContains([0x82, 87]), "no answer to 0x02: \(notified.all)")
                    return values
                }
            }
            // A read returns the last value notified: nothing before the first command.
            #expect(reads == [[], [0x81, 1, 4, 2]])
            // The two answers, and neither read's echo.
            #expect(notified.all == [[0x81, 1, 4, 2], [0x82, 87]])
            #expect(session.watcherCount == 0)
        }
    }

    /// After a read from an offset, BlueZ signals the whole value it stored (the part before
    /// the offset kept), so the echo holds the bytes read at that offset.
    @Test func theEchoOfAReadFromAnOffsetIsTheStoredValue() {
        let far = ContinuousClock.now + .seconds(3600)
        let fromTwo = Session.ReadMirror(value: [3, 4], offset: 2, expires: far)
        #expect(fromTwo.isEcho([1, 2, 3, 4]))
        #expect(fromTwo.isEcho([1, 2, 3, 4, 5]))       // an earlier, longer value's tail kept
        #expect(!fromTwo.isEcho([3, 4]))
        #expect(!fromTwo.isEcho([1, 2, 3, 5]))
        #expect(!fromTwo.isEcho([1, 2, 3]))
        let whole = Session.ReadMirror(value: [3, 4], offset: 0, expires: far)
        #expect(whole.isEcho([3, 4]))
        #expect(!whole.isEcho([3, 4, 5]))
    }
}
