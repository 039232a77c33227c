// The path bus -> cache -> watcher -> operation: every event with the values of the message
// that carried it, in bus order, and only from bluetoothd (org.bluez's current owner).

import DBusKit
import SimulatorHarness
import Testing
@testable import BlueZKit

@Suite struct SessionEventTests {
    /// A received signal, as the connection decodes it, from `sender`.
    static func received(_ signal: Signal, from sender: String) -> Message {
        Message(kind: .signal, sender: sender, destination: signal.destination, path: signal.path, interface: signal.interface,
                member: signal.member, body: signal.arguments)
    }

    static func nameOwnerChanged(old: String, new: String) -> Message {
        Message(kind: .signal, sender: Session.busDaemon, path: "/org/freedesktop/DBus", interface: Session.busDaemon,
                member: "NameOwnerChanged", body: [.string(BlueZ.service), .string(old), .string(new)])
    }

    static func connectedDevice(_ session: Session) -> ConnectedDevice {
        let adapter = Adapter(session: session, path: FakeBlueZ.adapter)
        return ConnectedDevice(device: Device(adapter: adapter, address: FakeBlueZ.address), origin: .alreadyConnected)
    }

    static func bytes(_ n: Int) -> [UInt8] { [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }

    /// Two notifications in one batch used to be delivered as two copies of the last value
    /// (the watcher ran after the whole batch and read the value from the cache).
    @Test func notificationsSharingABatchAreEachDeliveredWithTheirOwnValue() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let owner = fake.connection.uniqueName
        let connected = Self.connectedDevice(session)
        let level = try connected.characteristic(.batteryLevel, in: try await connected.service(.batteryService, timeout: .seconds(10)))
        let values = Lock<[[UInt8]]>([])
        try await connected.withNotifications(level, setupTimeout: .seconds(10), onValue: { value in values.withLock { $0.append(value) } }) {
            // Exactly one batch, as the connection hands it over.
            session.receive([FakeBlueZ.notification([0x81, 1]), FakeBlueZ.notification([0x7F, 0])].map { Self.received($0, from: owner) })
            // And over the bus: a burst of 1,000 distinct values, back to back.
            try await fake.emit((1...1_000).map { FakeBlueZ.notification(Self.bytes($0)) })
            #expect(await eventually { values.withLock { $0.count } >= 1_002 })
        }
        let delivered = values.withLock { $0 }
        #expect(delivered.prefix(2) == [[0x81, 1], [0x7F, 0]])
        #expect(Array(delivered.dropFirst(2)) == (1...1_000).map { Self.bytes($0) })
        #expect(session.watcherCount == 0)
    }

    /// The vendor answer and an unrelated notification in one batch: the request is answered
    /// (it used to see the unrelated value twice and time out).
    @Test func anAnswerFollowedAtOnceByAnotherNotificationIsMatched() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let owner = fake.connection.uniqueName
        let connected = Self.connectedDevice(session)
        let level = try connected.characteristic(.batteryLevel, in: try await connected.service(.batteryService, timeout: .seconds(10)))
        let notifyOnly = GATTCharacteristic(path: level.path, uuid: level.uuid, service: level.service, flags: ["write", "notify"], descriptors: [])
        let answer = try await CommandChannel.with(connected, write: notifyOnly, notify: notifyOnly, setupTimeout: .seconds(10)) { channel in
            async let answer = channel.request([0x02], responseCode: 0x82, timeout: .seconds(20))
            #expect(await eventually { channel.waitingCount == 1 && fake.calls.withLock { $0.contains { $0.member == "WriteValue" } } })
            session.receive([FakeBlueZ.notification([0x82, 57]), FakeBlueZ.notification([0x7F, 0])].map { Self.received($0, from: owner) })
            return try await answer
        }
        #expect(answer == [0x82, 57])
    }

    /// Any bus client may send a signal straight to us; only bluetoothd's count.
    @Test func signalsFromAnyoneButBluetoothdAreDropped() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let connected = Self.connectedDevice(session)
        let level = try connected.characteristic(.batteryLevel, in: try await connected.service(.batteryService, timeout: .seconds(10)))
        let impostor = try await BusConnection.connect(to: fake.bus.address)
        defer { impostor.close() }
        let us = session.connection.uniqueName
        let forged: [Signal] = [
            FakeBlueZ.propertiesChanged(FakeBlueZ.characteristic, BlueZ.gattCharacteristicInterface, ["Value": .bytes([0x01])], destination: us),
            FakeBlueZ.propertiesChanged(FakeBlueZ.device, BlueZ.deviceInterface, ["Connected": .boolean(false), "RSSI": .int16(-1)], destination: us),
            FakeBlueZ.interfacesRemoved(FakeBlueZ.device, [BlueZ.deviceInterface], destination: us),
            Signal(path: "/org/freedesktop/DBus", interface: Session.busDaemon, member: "NameOwnerChanged", destination: us,
                   arguments: [.string(BlueZ.service), .string(fake.connection.uniqueName), .string("")]),
        ]
        let values = Lock<[[UInt8]]>([])
        try await connected.withNotifications(level, setupTimeout: .seconds(10), onValue: { value in values.withLock { $0.append(value) } }) {
            try await impostor.emit(forged)
            #expect(await eventually { session.foreignSignalCount >= forged.count })
            // bluetoothd's own notification still counts.
            try await fake.emit([FakeBlueZ.notification([0x42])])
            #expect(await eventually { !values.withLock { $0.isEmpty } })
        }
        #expect(values.withLock { $0 } == [[0x42]])
        #expect(session.foreignSignalCount == forged.count)
        #expect(session.isBlueZAvailable)
        let device = session.withCache { $0[FakeBlueZ.device, BlueZ.deviceInterface] }
        #expect(device?["Connected"]?.bool == true)
        #expect(device?["RSSI"]?.integer == -50)
    }

    /// bluetoothd leaving and a new one arriving within one batch: the cache ends full and
    /// BlueZ available (the vanishing used to be applied after the whole batch).
    @Test func bluetoothdLeavingAndReturningInOneBatchLeavesAFullCache() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let owner = fake.connection.uniqueName
        let adapter = FakeBlueZ.connectedDevice[FakeBlueZ.adapter]!
        session.receive([
            Self.nameOwnerChanged(old: owner, new: ""),
            Self.nameOwnerChanged(old: "", new: owner),
            Self.received(FakeBlueZ.interfacesAdded(FakeBlueZ.adapter, adapter), from: owner),
        ])
        #expect(session.isBlueZAvailable)
        #expect(session.withCache { $0[FakeBlueZ.adapter, BlueZ.adapterInterface]?["Powered"]?.bool } == true)
        // The reload (GetManagedObjects) brings back everything else.
        #expect(await eventually { session.withCache { $0.objects.count } == FakeBlueZ.connectedDevice.count })

        // The same over the bus: the name released and taken again, objects announced.
        var events = session.events().makeAsyncIterator()
        _ = try await fake.connection.releaseName(BlueZ.service)
        _ = try await fake.connection.requestName(BlueZ.service)
        try await fake.emit(FakeBlueZ.connectedDevice.sorted { $0.key < $1.key }.map { FakeBlueZ.interfacesAdded($0.key, $0.value) })
        var seen = [String]()
        while let event = await events.next() {
            switch event {
            case .bluezVanished: seen.append("vanished")
            case .bluezAppeared: seen.append("appeared")
            case .loaded: seen.append("loaded")
            default: continue
            }
            if event == .loaded { break }
        }
        #expect(seen == ["vanished", "appeared", "loaded"])
        #expect(session.isBlueZAvailable)
        #expect(session.withCache { $0.objects.count } == FakeBlueZ.connectedDevice.count)
    }

    /// Watchers see an event in the order they were registered (they were run in dictionary
    /// order, so a response and a link loss in one batch could resolve either way).
    @Test func watchersRunInRegistrationOrder() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        defer { session.close() }
        let log = Lock<[Int]>([])
        var ids = [UInt64]()
        for index in 0..<64 {
            ids.append(session.addWatcher { _, event -> (@Sendable () -> Void)? in
                guard event != nil else { return nil }
                return { log.withLock { $0.append(index) } }
            })
        }
        session.receive([Self.received(FakeBlueZ.notification([1]), from: fake.connection.uniqueName)])
        #expect(log.withLock { $0 } == Array(0..<64))
        for id in ids { session.removeWatcher(id) }
    }

    /// The public stream: each event with its own value, in bus order.
    @Test func eventsCarryTheValuesOfTheirOwnMessage() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        var events = session.events().makeAsyncIterator()
        try await fake.emit([-70, -40, -90].map { FakeBlueZ.propertiesChanged(FakeBlueZ.device, BlueZ.deviceInterface, ["RSSI": .int16($0)]) })
        var rssi = [Int]()
        while rssi.count < 3, let event = await events.next() {
            if let value = event.value(of: "RSSI", on: BlueZ.deviceInterface, at: FakeBlueZ.device)?.integer { rssi.append(value) }
        }
        #expect(rssi == [-70, -40, -90])
        // The stream ends with the session.
        session.close()
        var last: SessionEvent?
        while let event = await events.next() { last = event }
        #expect(last == .busLost)
    }

    /// Closing the session from inside a notification callback, and starting a call there:
    /// neither traps nor blocks (close used to `queue.sync` onto the queue it was called on).
    @Test func closingTheSessionFromANotificationCallback() async throws {
        let fake = try await FakeBlueZ.start()
        defer { fake.close() }
        let session = try await fake.session()
        let connected = Self.connectedDevice(session)
        let level = try connected.characteristic(.batteryLevel, in: try await connected.service(.batteryService, timeout: .seconds(10)))
        let outcome = Lock<String?>(nil)
        let values = Lock<[[UInt8]]>([])
        let ended: String
        do {
            ended = try await connected.withNotificationStream(level, setupTimeout: .seconds(10)) { stream in
                // The callback (on the connection's queue) closes the session and calls again.
                let id = session.addWatcher { _, event in
                    guard event?.value(of: "Value", on: BlueZ.gattCharacteristicInterface, at: FakeBlueZ.characteristic) != nil else { return nil }
                    return {
                        session.close()
                        session.connection.send(BusConnection.busCall("ListNames", [])) { result in
                            outcome.withLock { $0 = result.isSuccess ? "answered" : "failed" }
                        }
                    }
                }
                defer { session.removeWatcher(id) }
                try await fake.emit([FakeBlueZ.notification([7])])
                do {
                    for try await value in stream { values.withLock { $0.append(value) } }
                    return "finished"
                } catch BLEError.unavailable {
                    return "unavailable"
                }
            }
        } catch BLEError.unavailable {
            ended = "unavailable"   // StopNotify on a closed session
        }
        #expect(await eventually { outcome.withLock { $0 } != nil })
        #expect(outcome.withLock { $0 } == "failed")
        #expect(values.withLock { $0 } == [[7]])
        #expect(ended == "unavailable")
        #expect(!session.isBlueZAvailable)
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
