import FoundationEssentials
import Testing
@testable import BlueZKit

@Suite("BluetoothAddress")
struct BluetoothAddressTests {
    @Test("accepts six hex pairs and normalises to uppercase", arguments: [
        ("C0:FF:EE:00:00:01", "C0:FF:EE:00:00:01"),
        ("c0:ff:ee:00:00:01", "C0:FF:EE:00:00:01"),
        ("aA:bB:cC:dD:eE:fF", "AA:BB:CC:DD:EE:FF"),
        ("00:00:00:00:00:00", "00:00:00:00:00:00"),
        ("ff:ff:ff:ff:ff:ff", "FF:FF:FF:FF:FF:FF"),
        ("01:23:45:67:89:ab", "01:23:45:67:89:AB"),
    ])
    func parsesValidAddress(input: String, canonical: String) throws {
        let address = try #require(BluetoothAddress(input))
        #expect(address.description == canonical)
        #expect("\(address)" == canonical)
    }

    @Test("rejects malformed addresses", arguments: [
        "",                         // empty
        "C0:FF:EE:00:00",           // five groups
        "C0:FF:EE:00:00:01:02",     // seven groups
        "C0:FF:EE:00:00:1",         // short last group
        "C0:FF:EE:00:00:001",       // long last group
        "C:0FF:EE:00:00:01",        // separator in the wrong place
        "C0-FF-EE-00-00-01",        // dashes
        "C0_FF_EE_00_00_01",        // underscores
        "C0FFEE000001",             // no separators
        "C0:FF:EE:00:00:0G",        // non-hex digit
        "C0:FF:EE:00:00:0x",        // non-hex digit
        " C0:FF:EE:00:00:01",       // leading space
        "C0:FF:EE:00:00:01 ",       // trailing space
        "C0:FF:EE:00:00:01\n",      // trailing newline
        "C0::FF:EE:00:00:1",        // doubled separator
        "ＣＯ:FF:EE:00:00:01",        // full-width letters (not ASCII)
        "C0:FF:EE:00:00:０1",        // full-width digit
        "dev_C0_FF_EE_00_00_01",    // path component is not an address string
    ])
    func rejectsMalformed(input: String) {
        #expect(BluetoothAddress(input) == nil)
    }

    @Test("parses the last component of a device object path", arguments: [
        ("/org/bluez/hci0/dev_C0_FF_EE_00_00_01", "C0:FF:EE:00:00:01"),
        ("/org/bluez/hci12/dev_aa_bb_cc_dd_ee_ff", "AA:BB:CC:DD:EE:FF"),
        ("dev_01_23_45_67_89_AB", "01:23:45:67:89:AB"),
    ])
    func parsesDevicePath(path: String, canonical: String) throws {
        let address = try #require(BluetoothAddress(devicePath: path))
        #expect(address.description == canonical)
    }

    @Test("rejects paths whose last component is not dev_XX_XX_XX_XX_XX_XX", arguments: [
        "",
        "/org/bluez/hci0",
        "/org/bluez/hci0/",
        "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010",
        "/org/bluez/hci0/dev_C0:FF:EE:00:00:01",
        "/org/bluez/hci0/dev_C0_FF_EE_00_00",
        "/org/bluez/hci0/dev_C0_FF_EE_00_00_01_02",
        "/org/bluez/hci0/DEV_C0_FF_EE_00_00_01",
        "/org/bluez/hci0/C0_FF_EE_00_00_01",
        "/org/bluez/hci0/dev_C0_FF_EE_00_00_0Z",
    ])
    func rejectsBadDevicePath(path: String) {
        #expect(BluetoothAddress(devicePath: path) == nil)
    }

    @Test func derivedForms() throws {
        let address = try #require(BluetoothAddress("c0:ff:ee:00:00:01"))
        #expect(address.devicePathComponent == "dev_C0_FF_EE_00_00_01")
        #expect(address.dashed == "C0-FF-EE-00-00-01")
        // The name BlueZ shows for a device without one: the address, either separator, either
        // case (a device naming itself by its address in lower case); nothing else.
        for spelled in ["C0:FF:EE:00:00:01", "C0-FF-EE-00-00-01", "c0:ff:ee:00:00:01", "c0-ff-ee-00-00-01", "C0:ff:EE:00:00:01"] {
            #expect(address.isSpelled(by: spelled), "\(spelled)")
        }
        for other in ["C0:FF:EE:00:00:02", "C0-FF:EE-00:00-01", "C0:FF:EE:00:00:0", "C0:FF:EE:00:00:01 ", "", "Thermo",
                      "C0;FF;EE;00;00;01", "C0:FF:EE:00:00:0\u{0131}", "C0:FF:EE:00:00:1\u{0}"] {
            #expect(!address.isSpelled(by: other), "\(other)")
        }
        #expect(BluetoothAddress(devicePath: "/org/bluez/hci0/" + address.devicePathComponent) == address)
    }

    @Test func equalityAndHashingIgnoreInputCase() throws {
        let lower = try #require(BluetoothAddress("aa:bb:cc:dd:ee:ff"))
        let upper = try #require(BluetoothAddress("AA:BB:CC:DD:EE:FF"))
        #expect(lower == upper)
        #expect(Set([lower, upper]).count == 1)
        #expect(lower != BluetoothAddress("AA:BB:CC:DD:EE:FE"))
    }

    @Test func codesAsString() throws {
        let address = try #require(BluetoothAddress("c0:ff:ee:00:00:01"))
        let data = try JSONEncoder().encode([address])
        #expect(String(decoding: data, as: UTF8.self) == #"["C0:FF:EE:00:00:01"]"#)
        let decoded = try JSONDecoder().decode([BluetoothAddress].self, from: Data(#"["c0:ff:ee:00:00:01"]"#.utf8))
        #expect(decoded == [address])
    }

    @Test("decoding rejects non-addresses", arguments: [#"["C0:FF:EE"]"#, #"[""]"#, "[42]", "[null]"])
    func decodingRejects(json: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([BluetoothAddress].self, from: Data(json.utf8))
        }
    }
}
