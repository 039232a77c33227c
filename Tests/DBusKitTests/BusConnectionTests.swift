import Testing
import Synchronization
@testable import DBusKit
import SimulatorHarness

@Suite struct BusConnectionTests {
    @Test func helloGivesAUniqueNameAndCallsGetReplies() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            #expect(connection.uniqueName.hasPrefix(":1."))
            let reply = try await connection.call(BusConnection.busCall("ListNames", []))
            let names = try #require(reply.body.first?.stringArray)
            #expect(names.contains("org.freedesktop.DBus"))
            #expect(names.contains(connection.uniqueName))
            #expect(connection.registeredReplyHandlerCount == 0)
        }
    }

    @Test func errorRepliesKeepNameAndMessage() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            await #expect(throws: BusError.self) {
                _ = try await connection.call(BusConnection.busCall("GetNameOwner", [.string("org.blectl.Nobody")]))
            }
            do {
                _ = try await connection.call(BusConnection.busCall("GetNameOwner", [.string("org.blectl.Nobody")]))
            } catch let error as BusError {
                #expect(error.errorName == DBusErrorName.nameHasNoOwner)
            }
            #expect(try await connection.nameOwner(of: "org.blectl.Nobody") == nil)
            #expect(try await connection.nameOwner(of: "org.freedesktop.DBus") == "org.freedesktop.DBus")
        }
    }

    @Test func connectingToNothingFailsWithConnectionFailed() async {
        do {
            _ = try await BusConnection.connect(to: "unix:path=/nonexistent/blectl-test-socket")
            Issue.record("connected to a socket that does not exist")
        } catch let error as BusError {
            guard case .connectionFailed(let name, _) = error else { Issue.record("got \(error)"); return }
            #expect(name.hasPrefix("org.freedesktop.DBus.Error."))
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test func invalidObjectPathIsRejectedBeforeLibdbusSeesIt() async throws {
        try await Simulator.with { bus in
            let connection = try await BusConnection.connect(to: bus.address)
            defer { connection.close() }
            let call = MethodCall(destination: "org.freedesktop.DBus", path: "not/a/path", interface: "org.freedesktop.DBus", member: "Ping")
            await #expect(throws: BusError.invalidArgument("object path 'not/a/path'")) {
                _ = try await connection.call(call)
            }
        }
    }

    @Test func signalsArriveThroughMatchRulesInOrder() async throws {
        try await Simulator.with { bus in
            let listener = try await BusConnection.connect(to: bus.address)
            defer { listener.close() }
            let rule = MatchRule(sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", arg0: "org.blectl.Test")
            let received = Lock<[String]>([])
            let token = listener.addSignalHandler(matching: [rule]) { messages in
                received.withLock { list in
                    for message in messages { list.append(message.body.dropFirst().compactMap(\.string).joined(separator: "->")) }
                }
            }
            try await listener.addMatch(rule)
            let owner = try await BusConnection.connect(to: bus.address)
            _ = try await owner.call(BusConnection.busCall("RequestName", [.string("org.blectl.Test"), .uint32(0)]))
            _ = try await owner.call(BusConnection.busCall("ReleaseName", [.string("org.blectl.Test")]))
            // A round trip on the listener after the signals were sent: its reply is delivered after them.
            _ = try await listener.call(BusConnection.busCall("ListNames", []))
            owner.close()
            let seen = received.withLock { $0 }
            #expect(seen == ["->\(owner.uniqueName)", "\(owner.uniqueName)->"])
            listener.removeSignalHandler(token)
            #expect(listener.signalHandlerCount == 0)
        }
    }

    @Test func roundTripOfEveryTypeBlueZUses() async throws {
        // The bus daemon echoes nothing, so encode through a real message and decode it back.
        let values: [DBusValue] = [
            .byte(7), .boolean(true), .int16(-2), .uint16(0x180F), .int32(-55), .uint32(9), .int64(-1), .uint64(1 << 40),
            .double(1.5), .string("blesim Probe"), .objectPath("/org/bluez/hci0"), .signature("a{sv}"),
            .bytes([0x81, 1, 4, 2]), .bytes([]),
            .stringArray(["180f", "180a"]),
            .array(elementSignature: "s", []),
            .stringVariantDictionary(["Transport": .string("le"), "RSSI": .int16(-80), "UUIDs": .stringArray([])]),
            .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(0x05F1), .variant(.bytes([1, 2])))]),
            .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", [
                .init(.objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"),
                      .dictionary(keySignature: "s", valueSignature: "a{sv}", [
                        .init(.string("org.bluez.Device1"), .stringVariantDictionary(["Connected": .boolean(false)])),
                      ])),
            ]),
            .structure([.string("a"), .int32(1)]),
            .variant(.variant(.uint32(3))),
        ]
        let decoded = try MessageRoundTrip.encodeAndDecode(values)
        #expect(decoded == values)
        #expect(decoded[16].stringKeyedDictionary?["RSSI"]?.integer == -80)
    }

    @Test func mismatchedContainerElementsAreRejected() throws {
        #expect(throws: BusError.self) {
            _ = try MessageRoundTrip.encodeAndDecode([.array(elementSignature: "s", [.int32(1)])])
        }
        #expect(throws: BusError.self) {
            _ = try MessageRoundTrip.encodeAndDecode([.string("nul\u{0}inside")])
        }
    }
}
