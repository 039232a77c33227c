import Testing
@testable import DBusKit

/// `Message` shares one storage object between copies (copy on write): a copy costs one
/// reference count, and writing to a copy never shows in another.
@Suite struct MessageTests {
    static func made() -> Message {
        Message(kind: .signal, serial: 7, replySerial: nil, sender: ":1.3", destination: ":1.9",
                path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                errorName: nil, signature: "s", body: [.string("org.bluez.Adapter1")])
    }

    @Test func writingToACopyLeavesTheOriginalAsItWas() {
        let original = Self.made()
        var copy = original
        copy.kind = .error
        copy.serial = 8
        copy.replySerial = 3
        copy.sender = ":1.4"
        copy.destination = nil
        copy.path = "/org/bluez/hci1"
        copy.interface = "org.bluez.Device1"
        copy.member = "Other"
        copy.errorName = "org.bluez.Error.Failed"
        copy.signature = "u"
        copy.body = [.uint32(5)]

        #expect(original.kind == .signal)
        #expect(original.serial == 7)
        #expect(original.replySerial == nil)
        #expect(original.sender == ":1.3")
        #expect(original.destination == ":1.9")
        #expect(original.path == "/org/bluez/hci0")
        #expect(original.interface == "org.freedesktop.DBus.Properties")
        #expect(original.member == "PropertiesChanged")
        #expect(original.errorName == nil)
        #expect(original.signature == "s")
        #expect(original.body == [.string("org.bluez.Adapter1")])

        #expect(copy.kind == .error)
        #expect(copy.serial == 8)
        #expect(copy.replySerial == 3)
        #expect(copy.sender == ":1.4")
        #expect(copy.destination == nil)
        #expect(copy.path == "/org/bluez/hci1")
        #expect(copy.interface == "org.bluez.Device1")
        #expect(copy.member == "Other")
        #expect(copy.errorName == "org.bluez.Error.Failed")
        #expect(copy.signature == "u")
        #expect(copy.body == [.uint32(5)])
    }

    /// Each field written alone to a fresh copy: only that field moves, in the copy only.
    @Test func eachSetterWritesToItsOwnCopyOnly() {
        let original = Self.made()
        var a = original, b = original
        a.serial = 100
        b.member = "Changed"
        #expect(original.serial == 7 && original.member == "PropertiesChanged")
        #expect(a.serial == 100 && a.member == "PropertiesChanged")
        #expect(b.serial == 7 && b.member == "Changed")
        // A message that holds its storage alone is written without a copy: the values stay right.
        var alone = Self.made()
        alone.serial = 9
        alone.serial += 1
        #expect(alone.serial == 10)
    }

    /// A received body in its wire form: a copy given a new body drops its own wire form
    /// only; the original still reads its body from the wire.
    @Test func aCopyGivenANewBodyLeavesTheOriginalsWireForm() throws {
        let values: [DBusValue] = [.string("org.bluez.GattCharacteristic1"),
                                   .dictionary(keySignature: "s", valueSignature: "v",
                                               [.init(.string("Value"), .variant(.bytes([1, 2, 3])))]),
                                   .array(elementSignature: "s", [])]
        let received = try #require(try MessageRoundTrip.receivedSignal(
            path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011",
            interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", sender: ":1.3", values))
        #expect(received.wire != nil)
        var copy = received
        copy.body = [.string("replaced")]
        #expect(copy.wire == nil)
        #expect(copy.body == [.string("replaced")])
        #expect(received.wire != nil)
        #expect(received.body == values)
        #expect(received.signature == "sa{sv}as")
    }

    /// BusConnection's routing: a rule is tried on the header (`matches(_: SignalHeader)`), and
    /// only a rule whose header matches and that has arg0 needs the decoded body.
    @Test func routingTriesTheHeaderThenArg0() {
        let header = SignalHeader(sender: ":1.3", path: "/org/bluez/hci0",
                                  interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
        let rule = MatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                             arg0: "org.bluez.Device1")
        #expect(rule.matches(header))
        // The header matches, the body does not: not routed.
        #expect(!rule.matchesArguments(of: Self.made()))
        var device = Self.made()
        device.body = [.string("org.bluez.Device1")]
        #expect(rule.matchesArguments(of: device))
        #expect(MatchRule(member: "PropertiesChanged").matchesArguments(of: Self.made()))
        // Lengths differ, equal lengths with other bytes, a missing field: no match.
        #expect(!MatchRule(interface: "org.freedesktop.DBus.ObjectManager").matches(header))
        #expect(!MatchRule(member: "PropertiesChangeX").matches(header))
        #expect(!MatchRule(member: "PropertiesChanged").matches(SignalHeader(sender: ":1.3", path: nil, interface: nil, member: nil)))
        #expect(!MatchRule(sender: ":1.30").matches(header))
        #expect(!MatchRule(pathNamespace: "/org/bluez").matches(SignalHeader(sender: nil, path: nil, interface: nil, member: nil)))
    }

    /// Routing reads a signal's header before its body: a rule matches on interface, member,
    /// path, path namespace and a unique sender; a well-known sender is left to the bus; arg0
    /// needs the body.
    @Test func aRuleMatchesOnTheHeaderThenOnArg0() {
        let message = Self.made()
        #expect(MatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged").matches(message))
        #expect(!MatchRule(interface: "org.freedesktop.DBus.Properties", member: "Other").matches(message))
        #expect(MatchRule(path: "/org/bluez/hci0").matches(message))
        #expect(!MatchRule(path: "/org/bluez").matches(message))
        #expect(MatchRule(pathNamespace: "/org/bluez").matches(message))
        #expect(!MatchRule(pathNamespace: "/org/blu").matches(message))
        #expect(MatchRule(sender: ":1.3").matches(message))
        #expect(!MatchRule(sender: ":1.4").matches(message))
        #expect(MatchRule(sender: "org.bluez").matches(message))
        #expect(MatchRule(arg0: "org.bluez.Adapter1").matches(message))
        #expect(!MatchRule(arg0: "org.bluez.Device1").matches(message))
        var call = message
        call.kind = .methodCall
        #expect(!MatchRule(interface: "org.freedesktop.DBus.Properties").matches(call))
    }
}
