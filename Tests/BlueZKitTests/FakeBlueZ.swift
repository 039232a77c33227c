// Plays bluetoothd on a private bus, so tests decide exactly which signals go out and how
// they are grouped: owns org.bluez, answers GetManagedObjects from `objects`, records and
// answers the method calls it is given handlers for, and emits signals back to back.

import DBusKit
import SimulatorHarness
@testable import BlueZKit

final class FakeBlueZ: Sendable {
    typealias Objects = [ObjectPath: [String: [String: DBusValue]]]

    static let adapter: ObjectPath = "/org/bluez/hci0"
    static let device: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01"
    static let service: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010"
    static let characteristic: ObjectPath = "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011"
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!

    /// An adapter (powered) and one connected device with services resolved, one service
    /// (0x180F) with one notifying characteristic (0x2A19).
    static let connectedDevice: Objects = [
        adapter: [BlueZ.adapterInterface: ["Address": .string("00:AA:01:00:00:01"), "Powered": .boolean(true), "Discovering": .boolean(false)]],
        device: [BlueZ.deviceInterface: ["Address": .string("C0:FF:EE:00:00:01"), "AddressType": .string("public"), "Adapter": .objectPath(adapter),
                                         "Connected": .boolean(true), "ServicesResolved": .boolean(true), "RSSI": .int16(-50)]],
        service: [BlueZ.gattServiceInterface: ["UUID": .string("0000180f-0000-1000-8000-00805f9b34fb"), "Primary": .boolean(true), "Device": .objectPath(device)]],
        characteristic: [BlueZ.gattCharacteristicInterface: ["UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(service),
                                                             "Flags": .stringArray(["read", "notify"]), "Notifying": .boolean(false)]],
    ]

    let bus: PrivateBus
    let connection: BusConnection
    let objects: Lock<Objects>
    /// Method calls received (not GetManagedObjects), in order.
    let calls = Lock<[Message]>([])

    private init(bus: PrivateBus, connection: BusConnection, objects: Objects) {
        self.bus = bus
        self.connection = connection
        self.objects = Lock(objects)
    }

    /// Starts a private bus and a fake bluetoothd on it. Methods on the objects (StartNotify,
    /// ReadValue, ...) answer with `answer` (by default an empty method return).
    static func start(objects: Objects = connectedDevice,
                      answer: @escaping @Sendable (Message) -> MethodReply = { _ in .values([]) }) async throws -> FakeBlueZ {
        let bus = try await PrivateBus.start()
        let connection = try await BusConnection.connect(to: bus.address)
        let fake = FakeBlueZ(bus: bus, connection: connection, objects: objects)
        fake.exportAll(answer: answer)
        guard try await connection.requestName(BlueZ.service) else { throw FakeError.nameTaken }
        return fake
    }

    enum FakeError: Error { case nameTaken }

    private func exportAll(answer: @escaping @Sendable (Message) -> MethodReply) {
        let objects = self.objects
        connection.export("/") { call in
            guard call.member == "GetManagedObjects" else { return .error(name: DBusErrorName.unknownMethod, message: "") }
            return .values([FakeBlueZ.managedObjects(objects.withLock { $0 })])
        }
        let calls = self.calls
        for path in objects.withLock({ Array($0.keys) }) {
            connection.export(path) { call in
                calls.withLock { $0.append(call) }
                return answer(call)
            }
        }
    }

    static func managedObjects(_ objects: Objects) -> DBusValue {
        .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", objects.sorted { $0.key < $1.key }.map { path, interfaces in
            .init(.objectPath(path), interfacesValue(interfaces))
        })
    }

    static func interfacesValue(_ interfaces: [String: [String: DBusValue]]) -> DBusValue {
        .dictionary(keySignature: "s", valueSignature: "a{sv}", interfaces.sorted { $0.key < $1.key }.map {
            .init(.string($0.key), .stringVariantDictionary($0.value))
        })
    }

    /// PropertiesChanged of `path`; to `destination` only when given (a unicast signal).
    static func propertiesChanged(_ path: ObjectPath, _ interface: String, _ changed: [String: DBusValue],
                                  invalidated: [String] = [], destination: String? = nil) -> Signal {
        Signal(path: path, interface: BlueZ.properties, member: "PropertiesChanged", destination: destination,
               arguments: [.string(interface), .stringVariantDictionary(changed), .stringArray(invalidated)])
    }

    static func interfacesAdded(_ path: ObjectPath, _ interfaces: [String: [String: DBusValue]], destination: String? = nil) -> Signal {
        Signal(path: "/", interface: BlueZ.objectManager, member: "InterfacesAdded", destination: destination,
               arguments: [.objectPath(path), interfacesValue(interfaces)])
    }

    static func interfacesRemoved(_ path: ObjectPath, _ interfaces: [String], destination: String? = nil) -> Signal {
        Signal(path: "/", interface: BlueZ.objectManager, member: "InterfacesRemoved", destination: destination,
               arguments: [.objectPath(path), .stringArray(interfaces)])
    }

    /// A Value change of the characteristic, as BlueZ signals a notification.
    static func notification(_ value: [UInt8]) -> Signal {
        propertiesChanged(characteristic, BlueZ.gattCharacteristicInterface, ["Value": .bytes(value)])
    }

    func emit(_ signals: [Signal]) async throws { try await connection.emit(signals) }

    /// A session of the library under test on this bus.
    func session() async throws -> Session { try await Session.open(address: bus.address, timeout: .seconds(30)) }

    func close() {
        connection.close()
        bus.kill()
    }
}
