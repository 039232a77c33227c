import Testing
@testable import BlueZKit

/// ``GATTCharacteristic/isReadable``: any of the Flags that allow a read
/// (bluez/doc/org.bluez.GattCharacteristic.rst), and only those.
@Suite struct GATTReadabilityTests {
    static func characteristic(_ flags: [String]) -> GATTCharacteristic {
        GATTCharacteristic(path: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service000a/char000b", uuid: .batteryLevel,
                           service: .batteryService, flags: flags, descriptors: [])
    }

    @Test("read, encrypt-read, encrypt-authenticated-read, secure-read: readable", arguments: [
        ["read"], ["read", "notify"], ["encrypt-read"], ["encrypt-authenticated-read", "write"], ["secure-read"],
    ])
    func readable(_ flags: [String]) {
        #expect(Self.characteristic(flags).isReadable)
    }

    @Test("write, notify, indicate and the like alone: not readable", arguments: [
        [], ["write"], ["write-without-response", "write"], ["notify"], ["indicate"], ["encrypt-write", "encrypt-notify"],
        ["authorize"], ["broadcast"],
    ])
    func notReadable(_ flags: [String]) {
        #expect(!Self.characteristic(flags).isReadable)
    }
}
