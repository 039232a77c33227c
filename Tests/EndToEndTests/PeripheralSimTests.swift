// The other side of the link in the simulator (issue 31): a second bus client
// (sim/peripheral-app) registers a GATT application and an advertisement with hci0, and
// `blectl-sim central` acts as the phone: connect, read, write, subscribe, disconnect.
// What the application is asked (and by whom: org.bluez's owner only), what the central
// received, the bytes on air, and two refusals as bluetoothd 5.66 answers them.

import Foundation
import SimulatorHarness
import Testing

@Suite("the simulator's LEAdvertisingManager1, GattManager1 and central")
struct PeripheralSimTests {
    static let app = BlectlSimTests.repoRoot.appendingPathComponent("sim/peripheral-app").path
    static let char0 = "/org/blesim/app/service0/char0"
    static let char1 = "/org/blesim/app/service0/char1"
    static let central = "/org/bluez/hci0/dev_C0_FF_EE_00_CE_01"

    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// One JSON object per line of `text`.
    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").map { object(String($0)) }
    }

    /// The bus address out of `blectl-sim start`'s line.
    static func address(_ start: String) -> String {
        start.components(separatedBy: "DBUS_SYSTEM_BUS_ADDRESS='").dropFirst().first?.components(separatedBy: "'").first ?? ""
    }

    @Test("an application and an advertisement: registered, on air, and a central reads, writes, subscribes and disconnects")
    func centralDrivesTheApplication() async throws {
        try await BlectlSimTests.withUser { run, _ in
            let start = try await run("blectl-sim start")
            #expect(start.status == 0, "\(start)")
            let env = start.stdout
            func sh(_ script: String) async throws -> Run { try await run(env + script) }
            let peripheral = try launchChild(Self.app, ["--ignore-stdin", "--notify-on-start", "0a0b,0c0d"],
                                             environment: ["DBUS_SYSTEM_BUS_ADDRESS": Self.address(start.stdout), "PATH": "/usr/bin:/bin"])
            defer { peripheral.sendSignal(SIGKILL); _ = peripheral.wait(timeout: .seconds(5)) }
            let ready = try await offThread { peripheral.waitForStdout(containing: #""event": "ready""#, timeout: .seconds(30)) }
            #expect(ready, "\(peripheral.currentStdout) \(peripheral.currentStderr)")

            let ads = Self.object(try await sh("blectl-sim advertisements").stdout)["advertisements"] as? [[String: Any]] ?? []
            #expect(ads.count == 1)
            // 128-bit service UUID, manufacturer data 0xffff 01 02; the name in the scan response.
            #expect(ads.first?["adv_data"] as? String == "11075b4a3f2e1d0c3a9f8e4b2d6c0100edfe05ffffff0102", "\(ads)")
            #expect(ads.first?["scan_response"] as? String == "1209626c6573696d205065726970686572616c", "\(ads)")
            #expect(ads.first?["type"] as? String == "peripheral")
            let apps = Self.object(try await sh("blectl-sim applications").stdout)["applications"] as? [[String: Any]] ?? []
            let service = (apps.first?["services"] as? [[String: Any]])?.first ?? [:]
            let chars = service["characteristics"] as? [[String: Any]] ?? []
            #expect(service["handle"] as? Int == 21 && service["end"] as? Int == 29, "\(apps)")
            #expect(chars.map { $0["handle"] as? Int ?? 0 } == [23, 26, 29], "\(chars)")
            #expect(chars.dropFirst().first?["ccc_handle"] as? Int == 27, "\(chars)")

            let session = try await sh("""
                blectl-sim central connect --mtu 100
                blectl-sim central read \(Self.char0)
                blectl-sim central read 0x0018
                blectl-sim central write feed0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b 776f726c64
                blectl-sim central read 23 --offset 2
                blectl-sim central write /org/blesim/app/service0/char2 01 --command
                blectl-sim central subscribe \(Self.char1)
                for i in $(seq 1 200); do
                    [ "$(blectl-sim central | grep -o '"kind": "notification"' | wc -l)" -ge 2 ] && break
                    sleep 0.05
                done
                blectl-sim central disconnect
                """)
            #expect(session.status == 0, "\(session)")
            let out = Self.lines(session.stdout)
            #expect(out.count == 8, "\(session)")
            guard out.count == 8 else { return }
            #expect(out[0]["connected"] as? Bool == true && out[0]["mtu"] as? Int == 100)
            #expect(out[1]["value"] as? String == "68656c6c6f")                 // "hello"
            #expect(out[2]["value"] as? String == "6772656574696e67")           // the descriptor: "greeting"
            #expect(out[3]["outcome"] as? String == "written")
            #expect(out[4]["value"] as? String == "726c64")                     // "world" from offset 2
            #expect(out[5]["outcome"] as? String == "sent")
            #expect(out[6]["outcome"] as? String == "written" && out[6]["ccc_handle"] as? Int == 27)
            #expect(out[7]["connected"] as? Bool == false)
            let notified = (out[7]["notifications"] as? [[String: Any]] ?? []).map { $0["value"] as? String ?? "" }
            #expect(notified == ["0a0b", "0c0d"], "\(out[7])")

            let refused = try await sh("blectl-sim central connect >/dev/null; blectl-sim central write 0x0017 ff")
            #expect(refused.status == 1, "\(refused)")
            #expect(Self.object(refused.stdout)["att_error"] as? String == "0x80", "\(refused)")   // Failed "0x80"
            _ = try await sh("blectl-sim central disconnect")
            let released = try await sh("blectl-sim advertisements release /org/blesim/adv0")
            #expect((Self.object(released.stdout)["advertisements"] as? [Any])?.isEmpty == true, "\(released)")
            let releaseCalled = try await offThread { peripheral.waitForStdout(containing: #""event": "Release""#, timeout: .seconds(10)) }
            #expect(releaseCalled)

            // What the application was asked, and by whom.
            let events = Self.lines(peripheral.currentStdout)
            let bluez = events.first { $0["event"] as? String == "ready" }?["bluez"] as? String
            let calls = events.filter { $0["sender"] != nil }
            #expect(bluez != nil && !calls.isEmpty)
            #expect(calls.allSatisfy { $0["sender"] as? String == bluez }, "\(calls)")
            let reads = events.filter { $0["event"] as? String == "ReadValue" }
            let options = reads.first?["options"] as? [String: Any] ?? [:]
            #expect(options["device"] as? String == Self.central && options["link"] as? String == "LE"
                    && options["mtu"] as? Int == 100 && options["offset"] == nil, "\(options)")
            #expect((reads.last?["options"] as? [String: Any])?["offset"] as? Int == 2, "\(reads)")
            let members = events.compactMap { $0["event"] as? String }
            #expect(members.filter { $0 == "StartNotify" }.count == 1 && members.filter { $0 == "StopNotify" }.count == 1, "\(members)")
            #expect(members.filter { $0 == "WriteValue" }.count == 3, "\(members)")

            // The application's client leaves: nothing registered any more, and no Release.
            peripheral.sendSignal(SIGTERM)
            let ended = try await offThread { peripheral.wait(timeout: .seconds(10)) }
            #expect(ended.status == 0, "\(ended)")
            let after = Self.object(try await sh("blectl-sim applications").stdout)["applications"] as? [Any]
            #expect(after?.isEmpty == true)
            #expect(Self.lines(peripheral.currentStdout).filter { $0["event"] as? String == "Release" }.count == 1)
        }
    }

    @Test("refusals: an unknown characteristic flag, advertising data over 31 bytes")
    func refusals() async throws {
        try await BlectlSimTests.withUser { run, _ in
            let start = try await run("blectl-sim start")
            #expect(start.status == 0, "\(start)")
            let environment = ["DBUS_SYSTEM_BUS_ADDRESS": Self.address(start.stdout), "PATH": "/usr/bin:/bin"]
            for (refuse, what, message) in [("bad-flags", "application", "No valid service object found"),
                                            ("long-adv", "advertisement", "Failed to register advertisement")] {
                let r = try await offThread { try runChild(Self.app, ["--once", "--refuse", refuse], environment: environment, timeout: .seconds(30)) }
                let refused = Self.lines(r.stdout).first { $0["event"] as? String == "refused" } ?? [:]
                #expect(refused["what"] as? String == what && refused["error"] as? String == "org.bluez.Error.Failed"
                        && refused["message"] as? String == message, "\(refuse): \(r)")
            }
            let apps = Self.object(try await run(start.stdout + "blectl-sim applications").stdout)
            let reason = (apps["refused"] as? [[String: Any]])?.first?["reason"] as? String ?? ""
            #expect(reason.hasPrefix("Failed to parse characteristic properties"), "\(apps)")
            let ads = Self.object(try await run(start.stdout + "blectl-sim advertisements").stdout)
            #expect((ads["refused"] as? [[String: Any]])?.first?["reason"] as? String
                    == "Advertising data too long or couldn't be generated.", "\(ads)")
        }
    }
}
