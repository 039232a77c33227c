// `blectl-sim device ADDRESS ...` as a user's script runs it (sim/blectl-sim, man
// blectl-sim): each fault of one device set at run time, what blectl then reports, the
// link dropped, and the usage errors. Each test has its own XDG_RUNTIME_DIR
// (BlectlSimTests.withUser), so its simulator is its own.

import Foundation
import SimulatorHarness
import Testing

@Suite("blectl-sim device: faults of one device at run time")
struct BlectlSimDeviceTests {
    /// The JSON object of a line of output.
    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// get-battery's error object (its one line on stderr).
    static func error(_ run: Run) -> [String: Any] {
        object(run.stderr.split(separator: "\n").last.map(String.init) ?? "")["error"] as? [String: Any] ?? [:]
    }

    @Test("abort-once, drop-once, needs-pairing, absent, vanish-after-connect: what blectl get-battery reports, once or until cleared")
    func faultKinds() async throws {
        try await BlectlSimTests.withUser { run, _ in
            let start = try await run("blectl-sim start --set fleet=8 --set disconnect_delay_ms=200")
            #expect(start.status == 0, "\(start)")
            let env = start.stdout      // export DBUS_SYSTEM_BUS_ADDRESS=...
            func sh(_ script: String) async throws -> Run { try await run(env + script) }

            let set = try await sh("blectl-sim device c0:ff:ee:f1:00:01 fault abort-once")
            #expect(set.status == 0, "\(set)")
            #expect(Self.object(set.stdout)["address"] as? String == Fleet.address(1))
            #expect(Self.object(set.stdout)["faults"] as? [String] == ["abort-once"])
            let aborted = try await sh("blectl get-battery \(Fleet.address(1))")
            #expect(aborted.status == 1, "\(aborted)")
            #expect(Self.error(aborted)["message"] as? String == "connect on \(Fleet.address(1)) failed: org.bluez.Error.Failed: le-connection-abort-by-remote")
            let retried = try await sh("blectl get-battery \(Fleet.address(1))")
            #expect(retried.status == 0, "\(retried)")
            #expect(Self.object(retried.stdout)["percentage"] as? Int == 1)

            _ = try await sh("blectl-sim device \(Fleet.address(2)) fault needs-pairing")
            let unpaired = try await sh("blectl get-battery \(Fleet.address(2))")
            #expect(unpaired.status == 77, "\(unpaired)")
            #expect(Self.error(unpaired)["dbus_error"] as? String == "org.bluez.Error.NotPermitted")
            let cleared = try await sh("blectl-sim device \(Fleet.address(2)) clear")
            #expect(Self.object(cleared.stdout)["faults"] as? [String] == [], "\(cleared)")
            let readable = try await sh("blectl get-battery \(Fleet.address(2))")
            #expect(readable.status == 0 && Self.object(readable.stdout)["percentage"] as? Int == 2, "\(readable)")

            let absent = try await sh("blectl-sim device \(Fleet.address(3)) fault absent")
            #expect(Self.object(absent.stdout)["advertising"] as? Bool == false, "\(absent)")
            let notFound = try await sh("blectl get-battery --timeout 2 \(Fleet.address(3))")
            #expect(notFound.status == 2, "\(notFound)")
            #expect(Self.error(notFound)["code"] as? String == "device_not_found")

            for (i, kind) in [(4, "vanish-after-connect"), (5, "drop-once")] {
                _ = try await sh("blectl-sim device \(Fleet.address(i)) fault \(kind)")
                let lost = try await sh("blectl get-battery \(Fleet.address(i))")
                #expect(lost.status == 4, "\(kind): \(lost)")
                #expect(Self.error(lost)["code"] as? String == "disconnected", "\(kind): \(lost)")
            }
            let dropOnce = try await sh("blectl-sim device \(Fleet.address(5))")
            #expect(Self.object(dropOnce.stdout)["faults"] as? [String] == [], "drop-once clears itself: \(dropOnce)")
            let second = try await sh("blectl get-battery \(Fleet.address(5))")
            #expect(second.status == 0 && Self.object(second.stdout)["percentage"] as? Int == 5, "\(second)")

            let state = try await sh("blectl-sim state")
            let faults = Self.object(state.stdout)["device_faults"] as? [String: [String]]
            #expect(faults == [Fleet.address(3): ["absent"], Fleet.address(4): ["vanish-after-connect"]], "\(state)")
            let calls = try await sh("blectl-sim calls")
            let members = ((try? JSONSerialization.jsonObject(with: Data(calls.stdout.utf8))) as? [[String: Any]] ?? [])
                .filter { $0["member"] as? String == "Connect" }.map { $0["outcome"] as? String ?? "" }
            #expect(members.first == "error:org.bluez.Error.Failed", "\(calls)")
        }
    }

    @Test("drop: the link goes down now (connected false), again exits 1; usage errors exit 2, unknown devices 1")
    func dropAndErrors() async throws {
        try await BlectlSimTests.withUser { run, _ in
            let start = try await run("blectl-sim start --set fleet=2")
            #expect(start.status == 0, "\(start)")
            let env = start.stdout
            func sh(_ script: String) async throws -> Run { try await run(env + script) }

            let connect = try await sh("""
                blectl scan --name 'blesim Fleet 0002' --count 1 --timeout 30 >/dev/null
                dbus-send --system --print-reply --dest=org.bluez \(Fleet.path(2)) org.bluez.Device1.Connect >/dev/null
                blectl-sim device \(Fleet.address(2))
                """)
            #expect(connect.status == 0, "\(connect)")
            #expect(Self.object(connect.stdout)["connected"] as? Bool == true, "\(connect)")
            let drop = try await sh("blectl-sim device \(Fleet.address(2)) drop")
            #expect(drop.status == 0, "\(drop)")
            #expect(Self.object(drop.stdout)["connected"] as? Bool == false, "\(drop)")
            #expect(Self.object(drop.stdout)["in_tree"] as? Bool == true, "\(drop)")
            let again = try await sh("blectl-sim device \(Fleet.address(2)) drop --remove")
            #expect(again.status == 1 && again.stderr.contains("is not connected"), "\(again)")

            for usage in ["blectl-sim device", "blectl-sim device nonsense fault absent",
                          "blectl-sim device \(Fleet.address(1)) fault", "blectl-sim device \(Fleet.address(1)) fault bogus",
                          "blectl-sim device \(Fleet.address(1)) explode", "blectl-sim device \(Fleet.address(1)) drop --now"] {
                let r = try await sh(usage)
                #expect(r.status == 2 && r.stderr.contains("See 'blectl-sim --help'."), "\(usage): \(r)")
            }
            let unknown = try await sh("blectl-sim device \(Fleet.address(3)) fault absent")
            #expect(unknown.status == 1 && unknown.stderr.contains("no device \(Fleet.address(3)) in this world"), "\(unknown)")
        }
    }
}
