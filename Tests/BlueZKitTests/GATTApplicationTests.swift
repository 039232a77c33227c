import Foundation
import Testing
import DBusKit
import SimulatorHarness
@testable import BlueZKit

/// A GATT application of this host's own against the simulator's GattManager1 and its
/// simulated central (sim/README.md, "The other side of the link"): what the central reads
/// is the application's value, what it writes becomes the value and an event with its
/// address, a subscription and a new value reach the central as a notification, calls from
/// anyone but bluetoothd are refused, and nothing stays registered afterwards.
@Suite struct GATTApplicationTests {
    static let central = BluetoothAddress("C0:FF:EE:00:CE:01")!
    static let custom = BluetoothUUID("5e770001-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!
    static let command = BluetoothUUID("5e770002-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!
    static let userDescription = BluetoothUUID(uuid16: 0x2901)

    static let application = GATTApplication(services: [
        .init(uuid: .batteryService, characteristics: [.init(uuid: .batteryLevel, flags: ["read", "notify"], value: [0x57])]),
        .init(uuid: custom, characteristics: [
            .init(uuid: command, flags: ["read", "write"], value: Array("hello".utf8),
                  descriptors: [.init(uuid: userDescription, value: Array("greeting".utf8))]),
        ]),
    ])
    static let root = "/org/blectl/test_app"
    static let level = root + "/service0/char0"
    static let greeting = root + "/service1/char0"
    static let description = root + "/service1/char0/desc0"

    /// Serves ``application`` (and a connectable advertisement, which the central needs) on a
    /// fresh simulator, the central connected; then checks nothing is left registered.
    static func serving(_ body: (Simulator, GATTApplicationHandle, AsyncThrowingStream<GATTServerEvent, any Error>.AsyncIterator) async throws -> Void) async throws {
        let sim = try await Simulator.start()
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        try await adapter.withGATTApplication(application, path: ObjectPath(root), timeout: .seconds(10)) { handle in
            try #require(try await sim.applications().map(\.path) == [root])
            try await adapter.withAdvertisement(LEAdvertisement(type: .peripheral, localName: "app"), timeout: .seconds(10)) { _ in
                var events = handle.events.makeAsyncIterator()
                try await sim.centralConnect()
                #expect(try await events.next() == .connected(central))
                try await body(sim, handle, events)
            }
        }
        #expect(try await sim.applications().isEmpty)
        let manager = try await sim.calls().filter { $0.interface == "org.bluez.GattManager1" }.map { "\($0.member) \($0.outcome)" }
        #expect(manager == ["RegisterApplication reply", "UnregisterApplication reply"])
        #expect(session.watcherCount == 0)
    }

    static func request(_ path: String, _ service: BluetoothUUID, _ characteristic: BluetoothUUID, descriptor: BluetoothUUID? = nil,
                        index: (Int, Int, Int?), offset: Int = 0, type: GATTServerRequest.WriteType? = nil, _ value: [UInt8]) -> GATTServerRequest {
        GATTServerRequest(attribute: GATTAttribute(path: ObjectPath(path), service: service, characteristic: characteristic,
                                                   descriptor: descriptor, index: index),
                          device: central, offset: offset, mtu: 247, link: "LE", writeType: type, value: value)
    }

    @Test("the central reads the values, writes one (whole, then at an offset), reads the descriptor; each an event with its address")
    func readAndWrite() async throws {
        try await Self.serving { sim, handle, events in
            var events = events
            #expect(try await sim.centralRead(Self.level).value == "57")
            #expect(try await events.next() == .read(Self.request(Self.level, .batteryService, .batteryLevel, index: (0, 0, nil), [0x57])))

            #expect(try await sim.centralWrite(Self.greeting, Array("howdy".utf8)).outcome == "written")
            #expect(try await events.next() == .written(Self.request(Self.greeting, Self.custom, Self.command, index: (1, 0, nil),
                                                                   type: .request, Array("howdy".utf8))))
            #expect(try await sim.centralWrite(Self.greeting, Array("ya".utf8), offset: 3).outcome == "written")
            _ = try await events.next()
            #expect(handle.value(of: handle.characteristics(Self.command)[0]) == Array("howya".utf8))
            #expect(try await sim.centralRead(Self.greeting, offset: 1).value == Array("owya".utf8).hexString)
            _ = try await events.next()

            let read = try await sim.centralRead(Self.description)
            #expect(read.value == Array("greeting".utf8).hexString)
            #expect(try await events.next() == .read(Self.request(Self.description, Self.custom, Self.command, descriptor: Self.userDescription,
                                                                index: (1, 0, 0), Array("greeting".utf8))))
            // Past the end: InvalidOffset, which bluetoothd answers ATT 0x07; no event.
            let past = try await sim.centralRead(Self.greeting, offset: 9)
            #expect(past.outcome == "att_error" && past.attError == "0x07" && past.dbusError == "org.bluez.Error.InvalidOffset", "\(past)")
        }
    }

    @Test("subscribed, a new value notified to the central, unsubscribed")
    func notifications() async throws {
        try await Self.serving { sim, handle, events in
            var events = events
            let level = try #require(handle.characteristics(.batteryLevel).first)
            #expect(try await sim.centralSubscribe(Self.level).outcome == "written")
            #expect(try await events.next() == .subscribed(level))
            try await handle.setValue([0x56], of: level)
            #expect(try await eventually { try await sim.centralState().notifications.map(\.value) == ["56"] })
            #expect(handle.value(of: level) == [0x56])
            _ = try await sim.centralUnsubscribe(Self.level)
            #expect(try await events.next() == .unsubscribed(level))
            try await sim.centralDisconnect()
            #expect(try await events.next() == .disconnected(Self.central))
        }
    }

    @Test("an impostor's calls are refused with AccessDenied and change nothing")
    func impostor() async throws {
        try await Self.serving { sim, handle, _ in
            let client = try #require(try await sim.applications().first?.client)
            let calls: [[String]] = [
                [Self.root, "org.freedesktop.DBus.ObjectManager.GetManagedObjects"],
                [Self.greeting, "org.bluez.GattCharacteristic1.ReadValue", "dict:string:string:"],
                [Self.greeting, "org.bluez.GattCharacteristic1.WriteValue", "array:byte:0x66", "dict:string:string:"],
                [Self.level, "org.bluez.GattCharacteristic1.StartNotify"],
            ]
            for call in calls {
                let r = await sim.run("/usr/bin/dbus-send", ["--bus=\(sim.address)", "--print-reply", "--dest=\(client)"] + call)
                #expect(r.status != 0 && r.stderr.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(call): \(r)")
            }
            #expect(handle.refusedCalls == calls.count)
            #expect(handle.value(of: handle.characteristics(Self.command)[0]) == Array("hello".utf8))
            #expect(try await sim.centralRead(Self.greeting).value == Array("hello".utf8).hexString)
        }
    }

    @Test("a negative offset, from org.bluez's owner itself, is InvalidOffset (it trapped the process)")
    func negativeOffset() {
        let objects = GATTApplicationObjects(root: ObjectPath(Self.root), application: Self.application) { _ in }
        let options = DBusValue.dictionary(keySignature: "s", valueSignature: "v", [DBusValue.DictEntry(.string("offset"), .variant(.int64(-1)))])
        for (member, signature, body) in [("ReadValue", "a{sv}", [options]), ("WriteValue", "aya{sv}", [.bytes([1]), options])] {
            let call = Message(kind: .methodCall, sender: ":1.1", path: ObjectPath(Self.greeting), interface: BlueZ.gattCharacteristicInterface,
                               member: member, signature: signature, body: body)
            guard case .error(let name, _) = objects.answer(call, bluezOwner: ":1.1") else {
                Issue.record("\(member) answered")
                continue
            }
            #expect(name == GATTApplicationObjects.invalidOffset)
        }
        #expect(objects.value(at: ObjectPath(Self.greeting)) == Array("hello".utf8))
    }

    @Test("org.bluez taken over by a client queued for it as bluetoothd exits: the application's events end unavailable")
    func ownerTakenOver() async throws {
        let sim = try await Simulator.start()
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let usurper = try await BusConnection.connect(to: sim.address)
        defer { usurper.close() }
        // RequestName without DO_NOT_QUEUE: in the queue behind bluetoothd.
        let request = MethodCall(destination: "org.freedesktop.DBus", path: ObjectPath("/org/freedesktop/DBus"),
                                 interface: "org.freedesktop.DBus", member: "RequestName", arguments: [.string(BlueZ.service), .uint32(0)])
        #expect(try await usurper.call(request, timeout: .seconds(10)).body.first?.integer == 2)   // IN_QUEUE
        let adapter = try Adapter.ready(in: session, named: nil)
        await #expect {
            try await adapter.withGATTApplication(Self.application, timeout: .seconds(10)) { handle in
                try await sim.setFault("bluez_exit_on", "Introspect")
                _ = await sim.run("/usr/bin/dbus-send", ["--bus=\(sim.address)", "--print-reply", "--reply-timeout=5000", "--dest=org.bluez", "/",
                                                   "org.freedesktop.DBus.Introspectable.Introspect"])
                for try await _ in handle.events {}
            }
        } throws: { error in
            guard case .unavailable(.bluezLeft, let operation, _)? = error as? BLEError else { return false }
            return operation?.kind == .serve
        }
        #expect(session.bluezOwner == usurper.uniqueName)
    }

    @Test("what bluetoothd would refuse is refused before anything is sent", arguments: [
        (GATTApplication(services: []), "no service: an application needs at least one"),
        (GATTApplication(services: [.init(uuid: .genericAccess)]), "service 1800 (GAP): bluetoothd serves this service itself"),
        (GATTApplication(services: [.init(uuid: .batteryService, characteristics: [.init(uuid: .batteryLevel, flags: ["read", "shout"])])]),
         "characteristic 2a19 (Battery Level) in service 180f (Battery): unknown flag \"shout\""),
        (GATTApplication(services: [.init(uuid: .batteryService, characteristics: [.init(uuid: .batteryLevel, flags: ["read"],
                                                                                          value: Array(repeating: 0, count: 513))])]),
         "characteristic 2a19 (Battery Level) in service 180f (Battery): a value of 513 bytes: at most 512"),
    ])
    func refusedBeforeSent(_ application: GATTApplication, _ message: String) async throws {
        let sim = try await Simulator.start()
        defer { sim.stop() }
        let session = try await Session.open(address: sim.address, timeout: .seconds(30))
        defer { session.close() }
        let adapter = try Adapter.ready(in: session, named: nil)
        await #expect {
            try await adapter.withGATTApplication(application, timeout: .seconds(10)) { _ in }
        } throws: { error in
            "\(error)" == message
        }
        #expect(try await sim.calls().filter { $0.interface == "org.bluez.GattManager1" }.isEmpty)
    }
}

extension [UInt8] {
    fileprivate var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
