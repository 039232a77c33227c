import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

/// Device1.Disconnected(reason, message) (bluetoothd 5.83+): kept per device from
/// org.bluez's owner only, until the link is up again, and carried by the link-loss error.
@Suite("Device1.Disconnected reasons")
struct DisconnectReasonTests {
    static func disconnected(_ path: ObjectPath, _ name: String, _ message: String, destination: String? = nil) -> Signal {
        Signal(path: path, interface: BlueZ.deviceInterface, member: "Disconnected", destination: destination,
               arguments: [.string(name), .string(message)])
    }

    @Test func bluetoothdsReasonIsKeptUntilTheLinkIsUpAgainAndCarriedByTheLinkLoss() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let device = Device(adapter: Adapter(session: session, path: FakeBlueZ.adapter), address: FakeBlueZ.address)
        let read = BLEOperation(.read, address: FakeBlueZ.address)
        try await fake.emit([
            Self.disconnected(FakeBlueZ.device, "org.bluez.Reason.Timeout", "Connection timeout"),
            FakeBlueZ.propertiesChanged(FakeBlueZ.device, BlueZ.deviceInterface, ["Connected": .boolean(false)]),
        ])
        let timeout = DisconnectReason(name: "org.bluez.Reason.Timeout", message: "Connection timeout")
        #expect(await eventually { session.withCache { $0.disconnectReason(of: FakeBlueZ.device) } == timeout })
        let lost = session.withCache { device.linkLost(during: read)($0, nil) } as? BLEError
        #expect(lost == .disconnected(read, reason: timeout))
        #expect(lost?.description == "disconnected during read on C0:FF:EE:00:00:01 (bluetoothd: org.bluez.Reason.Timeout: Connection timeout)")
        // Another object's signal says nothing of this device.
        try await fake.emit([Self.disconnected(FakeBlueZ.adapter, "org.bluez.Reason.Remote", "x")])
        // The link up again: the reason is forgotten.
        try await fake.emit([FakeBlueZ.propertiesChanged(FakeBlueZ.device, BlueZ.deviceInterface, ["Connected": .boolean(true)])])
        #expect(await eventually { session.withCache { $0.disconnectReason(of: FakeBlueZ.device) } == nil })
        #expect(session.withCache { $0.disconnectReason(of: FakeBlueZ.adapter) } == nil)
    }

    @Test func aReasonFromAnyoneButBluetoothdIsDropped() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let impostor = try await BusConnection.connect(to: fake.bus.address)
        defer { impostor.close() }
        let us = session.connection.uniqueName
        try await impostor.emit([Self.disconnected(FakeBlueZ.device, "org.bluez.Reason.Remote", "forged", destination: us)])
        #expect(await eventually { session.foreignSignalCount >= 1 })
        // bluetoothd's own, sent after, is what is kept.
        try await fake.emit([Self.disconnected(FakeBlueZ.device, "org.bluez.Reason.Local", "Connection terminated by local host")])
        #expect(await eventually { session.withCache { $0.disconnectReason(of: FakeBlueZ.device) } != nil })
        #expect(session.withCache { $0.disconnectReason(of: FakeBlueZ.device) }
                == DisconnectReason(name: "org.bluez.Reason.Local", message: "Connection terminated by local host"))
        #expect(session.foreignSignalCount == 1)
    }
}
