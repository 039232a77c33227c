import Testing
import Glibc
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// A session's observer learns what became of each signal (bluetoothd's applied, anyone
/// else's dropped, naming sender and owner) and which operations began, in order.
@Suite struct SessionObserverTests {
    final class Recorder: SessionObserver {
        let fates = Lock<[(sender: String?, member: String?, fate: SignalFate)]>([])
        let operations = Lock<[BLEOperation]>([])
        /// Microseconds each of the first `slowSignals` signals' callbacks takes: a slow
        /// observer, so that signals queue up behind it (the backlog a loaded machine makes),
        /// but a bounded one (slow for ever, against a producer that does not slow down, the
        /// backlog would grow without end and hold up every reply behind it).
        let slowness: UInt32
        let slowSignals: Int
        let seen = Lock(0)
        init(slowness: UInt32 = 0, slowSignals: Int = 0) {
            self.slowness = slowness
            self.slowSignals = slowSignals
        }
        func session(received signal: Message, _ fate: SignalFate, at time: ContinuousClock.Instant) {
            if slowness > 0, seen.withLock({ $0 += 1; return $0 <= slowSignals }) { usleep(slowness) }
            fates.withLock { $0.append((signal.sender, signal.member, fate)) }
        }
        func session(began operation: BLEOperation) { operations.withLock { $0.append(operation) } }
    }

    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!

    @Test func signalsFromAnyoneButBlueZAreDroppedWithSenderAndOwner() async throws {
        try await Simulator.with { sim in
            // 3 ms for each of the first 60 signals, against the impostor's rounds every 5 ms:
            // signals are still queued when it stops (without the barrier below this failed
            // every time: 8 observed, 20 counted). Slow for every signal, the backlog grew
            // under ThreadSanitizer until the barrier's reply waited more than 10 s behind it.
            let recorder = Recorder(slowness: 3000, slowSignals: 60)
            let session = try await Session.open(address: sim.address, timeout: .seconds(30), observer: recorder)
            defer { session.close() }
            let owner = try #require(try await session.connection.nameOwner(of: "org.bluez"))
            let impostor = try await offThread { try sim.startImpostor(intervalMilliseconds: 5) }
            #expect(await eventually { session.foreignSignalCount >= 3 })
            _ = try await offThread { try impostor.stop() }
            // A barrier, not a pause: dbus-daemon routes everything the impostor sent before it
            // drops its unique name, and our connection hands signals to the session (and its
            // observer) before any reply that came after them. Once GetNameOwner says the name
            // is gone, every signal of the impostor has been counted and observed.
            let gone = try await eventually(within: .seconds(30)) {
                try await session.connection.nameOwner(of: impostor.uniqueName, timeout: .seconds(30)) == nil
            }
            #expect(gone)
            let fates = recorder.fates.withLock { $0 }
            let dropped = fates.filter { $0.sender == impostor.uniqueName }
            #expect(!dropped.isEmpty)
            #expect(dropped.allSatisfy { $0.fate == .notFromBlueZ(sender: impostor.uniqueName, owner: owner) }, "\(dropped)")
            #expect(dropped.count == session.foreignSignalCount)

            // bluetoothd's own signals are applied (a scan's devices).
            let adapter = try Adapter.ready(in: session, named: nil)
            _ = try await Device.find(Self.probe, on: adapter, timeout: .seconds(20))
            let applied = recorder.fates.withLock { $0 }.filter { $0.sender == owner }
            #expect(applied.contains { $0.member == "InterfacesAdded" && $0.fate == .applied })
            #expect(applied.allSatisfy { $0.fate == .applied || $0.fate == .unchanged })
        }
    }

    @Test func operationsBeganInOrderForARead() async throws {
        try await Simulator.with(faults: ["disconnect_delay_ms": "100"]) { sim in
            let recorder = Recorder()
            let session = try await Session.open(address: sim.address, timeout: .seconds(30), observer: recorder)
            defer { session.close() }
            let adapter = try Adapter.ready(in: session, named: nil)
            let device = try await Device.find(Self.probe, on: adapter, timeout: .seconds(20))
            _ = try await device.withConnection(timeout: .seconds(20)) { connected in
                let battery = try await connected.service(.batteryService, timeout: .seconds(10))
                return try await connected.read(try connected.characteristic(.batteryLevel, in: battery), timeout: .seconds(10))
            }
            let kinds = recorder.operations.withLock { $0 }.map(\.kind).filter { $0 != .discovery }
            // Looking for the device, then connect, services, the read, the disconnect.
            let expected: [BLEOperation.Kind] = [.deviceLookup, .connect, .serviceResolution, .read, .disconnect]
            #expect(kinds.filter(expected.contains).reduce(into: [BLEOperation.Kind]()) { if $0.last != $1 { $0.append($1) } } == expected,
                    "\(kinds)")
            let read = try #require(recorder.operations.withLock { $0 }.first { $0.kind == .read })
            #expect(read.characteristic == .batteryLevel && read.address == Self.probe)
        }
    }
}
