import Testing
@testable import DBusKit

/// Path arithmetic on the UTF-8 view: `parent`, `lastComponent` and `isChild(of:)` agree with
/// each other and with a component split, for roots, nested paths and near-prefixes.
@Suite struct ObjectPathTests {
    static let paths: [ObjectPath] = [
        "/", "/org", "/org/bluez", "/org/bluez/hci0", "/org/bluez/hci0/dev_C0_FF_EE_00_00_01",
        "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service000a", "/org/bluez/hci01", "/org/bluez/hci0x/dev_1",
        "/org/bluez/hci1/dev_C0_FF_EE_00_00_01", "/a", "/a/b", "/ab",
    ]

    @Test func parentAndLastComponentSplitAtTheLastSlash() {
        #expect(ObjectPath("/").parent == nil)
        #expect(ObjectPath("/org").parent == "/")
        #expect(ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01").parent == "/org/bluez/hci0")
        #expect(ObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01").lastComponent == "dev_C0_FF_EE_00_00_01")
        #expect(ObjectPath("/org").lastComponent == "org")
        #expect(ObjectPath("/").lastComponent == "")
    }

    @Test func isChildMeansTheParentIsThatPath() {
        for path in Self.paths {
            for candidate in Self.paths {
                #expect(path.isChild(of: candidate) == (path.parent == candidate), "\(path) child of \(candidate)")
            }
        }
        #expect(ObjectPath("/org/bluez/hci0/dev_1").isChild(of: "/org/bluez/hci0"))
        #expect(!ObjectPath("/org/bluez/hci0x/dev_1").isChild(of: "/org/bluez/hci0"))
        #expect(!ObjectPath("/org/bluez/hci0/dev_1/service0001").isChild(of: "/org/bluez/hci0"))
        #expect(ObjectPath("/a").isChild(of: "/"))
        #expect(!ObjectPath("/").isChild(of: "/"))
    }
}
