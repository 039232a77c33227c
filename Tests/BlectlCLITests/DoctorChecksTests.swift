import Foundation
import Testing
@testable import BlectlCLI

/// The parts of `doctor` that read the machine rather than the bus: rfkill switches from a
/// sysfs tree (built here as the kernel lays it out), and BlueZ's version from its Device ID.
@Suite("doctor: rfkill and version")
struct DoctorChecksTests {
    /// A fake `/sys/class/rfkill` with the switches given: (id, type, name, soft, hard).
    static func sysfs(_ switches: [(String, String, String, Int, Int)]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rfkill-\(UUID().uuidString)")
        for (id, type, name, soft, hard) in switches {
            let dir = root.appendingPathComponent(id)
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for (file, value) in [("type", type), ("name", name), ("soft", "\(soft)"), ("hard", "\(hard)")] {
                try (value + "\n").write(to: dir.appendingPathComponent(file), atomically: true, encoding: .utf8)
            }
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root.path
    }

    @Test("switches: Bluetooth ones only, by id, states read")
    func reading() throws {
        let root = try Self.sysfs([("rfkill10", "bluetooth", "hci1", 0, 1), ("rfkill2", "wlan", "phy0", 1, 0),
                                   ("rfkill3", "bluetooth", "hci0", 1, 0)])
        #expect(RfkillSwitch.bluetooth(root: root) == [
            RfkillSwitch(id: "rfkill3", name: "hci0", softBlocked: true, hardBlocked: false),
            RfkillSwitch(id: "rfkill10", name: "hci1", softBlocked: false, hardBlocked: true),
        ])
        #expect(RfkillSwitch.bluetooth(root: root + "/missing") == [])
    }

    @Test("the check: hard block before soft, the adapter's own switch only, PowerState off-blocked, none")
    func check() throws {
        let root = try Self.sysfs([("rfkill0", "bluetooth", "hci0", 1, 0), ("rfkill1", "bluetooth", "hci1", 1, 1),
                                   ("rfkill2", "wlan", "phy0", 1, 1)])
        let hci0 = DoctorCommand.rfkill(adapterName: "hci0", powerState: "off-blocked", root: root)
        #expect(hci0.ok == false && hci0.detail == "hci0 is soft-blocked (rfkill0)" && hci0.hint == "rfkill unblock bluetooth")
        let hci1 = DoctorCommand.rfkill(adapterName: "hci1", powerState: nil, root: root)
        #expect(hci1.ok == false && hci1.detail.hasPrefix("hci1 is hard-blocked (rfkill1)"))
        let any = DoctorCommand.rfkill(adapterName: nil, powerState: nil, root: root)
        #expect(any.ok == false && any.detail.hasPrefix("hci1 is hard-blocked"))
        let hci2 = DoctorCommand.rfkill(adapterName: "hci2", powerState: nil, root: root)
        #expect(hci2.ok == true && hci2.detail == "no rfkill switch for hci2")
        let reported = DoctorCommand.rfkill(adapterName: "hci2", powerState: "off-blocked", root: root)
        #expect(reported.ok == false && reported.detail == "BlueZ reports PowerState off-blocked")
        let clear = try Self.sysfs([("rfkill0", "bluetooth", "hci0", 0, 0)])
        let ok = DoctorCommand.rfkill(adapterName: "hci0", powerState: "on", root: clear)
        #expect(ok.ok == true && ok.detail == "rfkill0 not blocked")
    }

    @Test("BlueZ's version from its Device ID modalias; others none", arguments: [
        ("usb:v1D6Bp0246d0542", "5.66"), ("usb:v1d6bp0246d0548", "5.72"), ("usb:v1D6Bp0246d0500", "5.0"),
        ("usb:v0A12p0001d8891", nil), ("usb:v1D6Bp0246dZZ", nil), ("bluetooth:v1D6Bp0246d0542", nil), ("", nil),
    ] as [(String, String?)])
    func version(modalias: String, expected: String?) {
        #expect(DoctorCommand.bluezVersion(modalias) == expected)
    }
}
