import Testing
@testable import DBusKit

/// The header's interface and member names: the bus's own names come back as the shared
/// constants, every other name (a neighbour of one of them included) byte for byte.
@Suite struct WellKnownNameTests {
    @Test(arguments: MessageDecoder.wellKnownNames)
    func aWellKnownNameIsThatName(_ name: String) {
        #expect(decoded(name) == name)
    }

    /// Longer, shorter, one byte different, empty, and names of other interfaces.
    @Test(arguments: ["org.freedesktop.DBus.PropertiesX", "org.freedesktop.DBus.Propertie", "org.freedesktop.DBus.Properties.",
                      "org.freedesktop.DBus.properties", "org.freedesktop.DBu", "org.freedesktop.DBus.", "PropertiesChange",
                      "PropertiesChanged2", "InterfacesAdde", "", "org.bluez.GattCharacteristic1", "Connect"])
    func anyOtherNameIsCopied(_ name: String) {
        #expect(decoded(name) == name)
        #expect(!MessageDecoder.wellKnownNames.contains(name))
    }

    @Test func noNameIsNil() {
        #expect(MessageDecoder.name(nil) == nil)
    }

    private func decoded(_ name: String) -> String? {
        name.withCString { MessageDecoder.name($0) }
    }
}
