// `blectl doctor` against the simulator: every check passing, then each check failing in
// turn through a simulator fault (or a bus without bluetoothd, or no bus at all): the
// exact checks printed, the status of the first failure, its error on stderr, and
// bluetoothd left as found.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl doctor")
struct DoctorTests {
    static let names = ["bus", "bluetoothd", "permission", "adapter", "rfkill", "powered", "le", "discovery"]

    /// (name, ok, detail, hint) of each check, in order.
    static func checks(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) -> [(String, Bool?, String, String?)] {
        guard let object = run.jsonObject(sourceLocation: sourceLocation), let checks = object["checks"]?.array else { return [] }
        #expect(object.keys == ["checks"], sourceLocation: sourceLocation)
        return checks.map { check in
            #expect(check.keys == ["name", "ok", "detail", "hint"], sourceLocation: sourceLocation)
            let ok: Bool? = check["ok"] == .null ? nil : check["ok"] == true
            return (check["name"]?.string ?? "", ok, check["detail"]?.string ?? "", check["hint"]?.string)
        }
    }

    /// The sysfs rfkill state this machine has, as doctor reports it when nothing blocks.
    static var rfkillDetail: String {
        FileManager.default.fileExists(atPath: "/sys/class/rfkill") ? "" : "no rfkill switch for hci0"
    }

    @Test("everything in order: eight checks passing, exit 0, discovery started and stopped")
    func allPass() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["doctor"])
            #expect(run.status == 0 && run.stderr == "", "\(run)")
            let checks = Self.checks(run)
            #expect(checks.map(\.0) == Self.names)
            #expect(checks.allSatisfy { $0.1 == true && $0.3 == nil }, "\(checks)")
            #expect(checks.count == 8 && checks[1].2.hasPrefix("org.bluez is :1.") && checks[1].2.hasSuffix("; BlueZ 5.66"), "\(checks)")
            #expect(checks.count == 8 && checks[3].2 == "hci0 (00:1A:7D:DA:71:13)")
            #expect(checks.count == 8 && checks[5].2 == "hci0 is powered")
            #expect(checks.count == 8 && checks[6].2 == "roles: central, peripheral")
            #expect(checks.count == 8 && checks[7].2.hasPrefix("StartDiscovery and StopDiscovery answered in "))
            let calls = try await sim.calls().filter { $0.interface == "org.bluez.Adapter1" }.map(\.member)
            #expect(calls == ["StartDiscovery", "StopDiscovery"])
            try await sim.expectClean()
            let text = await sim.blectl(["doctor", "--format", "text"])
            #expect(text.status == 0, "\(text)")
            #expect(text.lines.count == 8 && text.lines.allSatisfy { $0.hasPrefix("ok    ") }, "\(text)")
            #expect(text.lines.map { String($0.dropFirst(6).prefix(11)).trimmingCharacters(in: .whitespaces) } == Self.names)
        }
    }

    struct Case: Sendable, CustomStringConvertible {
        var label: String
        var faults: [String: String]
        var arguments: [String] = []
        /// The first check that fails; those before it pass.
        var failing: String
        var status: Int32
        var detail: String
        var hintPrefix: String
        /// Checks after the failing one that are still made (the rest: null, "not checked").
        var stillChecked: [String] = []
        var description: String { label }
    }

    static let cases: [Case] = [
        Case(label: "no adapter", faults: ["no_adapter": "1"], failing: "adapter", status: 69,
             detail: "BlueZ has no Bluetooth adapter", hintPrefix: "Is the controller there?", stillChecked: ["rfkill"]),
        Case(label: "--adapter names one BlueZ lacks", faults: [:], arguments: ["--adapter", "hci7"], failing: "adapter", status: 69,
             detail: "BlueZ has no adapter hci7 (it has hci0)", hintPrefix: "Name one of those with --adapter", stillChecked: ["rfkill"]),
        Case(label: "powered off", faults: ["adapter_powered_off": "1"], failing: "powered", status: 69,
             detail: "hci0 is powered off", hintPrefix: "Power it on: bluetoothctl power on", stillChecked: ["le"]),
        Case(label: "blocked by rfkill, as BlueZ >= 5.64 reports it (PowerState off-blocked)", faults: ["second_adapter": "1", "experimental": "1"],
             arguments: ["--adapter", "hci1"], failing: "rfkill", status: 69,
             detail: "BlueZ reports PowerState off-blocked", hintPrefix: "rfkill unblock bluetooth", stillChecked: ["powered", "le"]),
        Case(label: "no LE central role", faults: ["adapter_roles": "peripheral"], failing: "le", status: 69,
             detail: "hci0 cannot act as an LE central (roles: peripheral)", hintPrefix: "Use an adapter that supports Bluetooth LE"),
        Case(label: "discovery refused (InProgress every time)", faults: ["start_discovery_in_progress": "10"], failing: "discovery", status: 5,
             detail: "StartDiscovery failed: busy: ", hintPrefix: "Another program may hold the adapter"),
        Case(label: "the bus policy refuses", faults: ["access_denied": "1"], failing: "permission", status: 77,
             detail: "the bus policy refused GetManagedObjects: ", hintPrefix: "Join the group the policy admits", stillChecked: ["rfkill"]),
        // The bus answers; bluetoothd does not give its objects: bluetoothd's fault, not the bus's.
        Case(label: "GetManagedObjects never answered", faults: ["get_managed_objects_held": "1"], arguments: ["--timeout", "1"],
             failing: "bluetoothd", status: 124, detail: "bluetoothd did not give its objects (GetManagedObjects): ",
             hintPrefix: "bluetoothd may be stuck", stillChecked: ["rfkill"]),
        // Both calls must be answered: an unanswered StartDiscovery is not a discovery that works.
        Case(label: "StartDiscovery never answered", faults: ["start_discovery_unanswered": "1"], arguments: ["--timeout", "5"],
             failing: "discovery", status: 124, detail: "StartDiscovery failed: timed out during discovery", hintPrefix: "Another program"),
        Case(label: "StopDiscovery refused as the adapter goes: 69, as for every command", faults: ["remove_adapter_on": "StopDiscovery"],
             failing: "discovery", status: 69, detail: "StopDiscovery failed: Bluetooth adapter hci0 was removed during discovery",
             hintPrefix: "The adapter went away"),
        Case(label: "powered off at StartDiscovery: 69", faults: ["power_off_on": "StartDiscovery"],
             failing: "discovery", status: 69, detail: "StartDiscovery failed: Bluetooth adapter hci0 was powered off during discovery",
             hintPrefix: "The adapter went away"),
    ]

    @Test("one check failing: those before pass, exact detail and hint, the status of that check", arguments: cases)
    func failing(_ c: Case) async throws {
        try await Sim.with(faults: c.faults) { sim in
            let run = await sim.blectl(["doctor"] + c.arguments)
            #expect(run.status == c.status, "\(run)")
            let checks = Self.checks(run)
            #expect(checks.map(\.0) == Self.names, "\(run)")
            guard let index = Self.names.firstIndex(of: c.failing), checks.count == Self.names.count else { return }
            for check in checks[..<index] { #expect(check.1 == true, "\(check)") }
            #expect(checks[index].1 == false)
            #expect(checks[index].2.hasPrefix(c.detail), "\(checks[index])")
            #expect(checks[index].3?.hasPrefix(c.hintPrefix) == true, "\(checks[index])")
            for check in checks[(index + 1)...] {
                if c.stillChecked.contains(check.0) {
                    #expect(check.1 != nil, "\(check)")
                } else {
                    #expect(check.1 == nil && check.2.hasPrefix("not checked: needs "), "\(check)")
                }
            }
            let error = try #require(run.jsonError())
            #expect(error["exit_status"] == .int(Int(c.status)))
            #expect(error["operation"]?.string != nil, "every failure names its stage: \(error)")
            try await sim.expectClean()
        }
    }

    @Test("a bus where nobody owns org.bluez: bluetoothd fails, 69; no bus at all: bus fails, 69")
    func noBluetoothd() async throws {
        try await Sim.with { sim in
            let (daemon, address) = try await sim.bareBus()
            defer { daemon.sendSignal(SIGTERM); _ = daemon.wait(timeout: .seconds(3)) }
            let bare = await sim.blectl(["doctor"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
            #expect(bare.status == 69, "\(bare)")
            let checks = Self.checks(bare)
            #expect(checks.map(\.0) == Self.names)
            #expect(checks.map(\.1) == [true, false, nil, nil, true, nil, nil, nil], "\(checks)")
            #expect(checks.first?.2 == address)
            #expect(checks.dropFirst().first?.3 == "Start it: sudo systemctl start bluetooth (and enable it to start at boot).")
            #expect(bare.jsonError()?["message"] == "bluetoothd is not running (org.bluez is not on the system bus)")

            let none = await sim.blectl(["doctor"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/blectl-doctor"])
            #expect(none.status == 69, "\(none)")
            #expect(Self.checks(none).map(\.1) == [false, nil, nil, nil, true, nil, nil, nil])
            #expect(Self.checks(none).first?.2.hasPrefix("cannot connect to unix:path=/nonexistent/blectl-doctor: ") == true)
        }
    }

    /// StartDiscovery held by the simulator: the deadline comes first, and doctor says so
    /// with the timeout's status, StopDiscovery following the late reply.
    @Test("discovery that never answers within --timeout: 124, discovery named")
    func discoveryTimeout() async throws {
        try await Sim.with(faults: ["start_discovery_held": "1"]) { sim in
            let run = await sim.blectl(["doctor", "--timeout", "5"])
            #expect(run.status == 124, "\(run)")
            let checks = Self.checks(run)
            #expect(checks.map(\.1) == [true, true, true, true, true, true, true, false], "\(checks)")
            #expect(run.jsonError()?["operation"] == "discovery")
            // The stage held is the one named: the StartDiscovery reached BlueZ.
            try #expect(await sim.calls().filter { $0.member == "StartDiscovery" }.map(\.outcome) == ["pending"])
        }
    }

    /// A signal while StartDiscovery is pending: no report (a cut-short check is no finding),
    /// 130, and the discovery that bluetoothd may have started ends with blectl's connection.
    @Test("interrupted: no report, ends by the signal, nothing left")
    func interrupted() async throws {
        try await Sim.with(faults: ["start_discovery_held": "1"]) { sim in
            let process = try await sim.launch(["doctor", "--timeout", "20"])
            _ = try await offThread { try sim.simulator.waitForState { !$0.pendingStartDiscovery.isEmpty } }
            #expect(await process.signalAndWaitUntilTaken(SIGINT))
            let result = try await process.finish()
            #expect(result.status == 130, "\(result)")
            #expect(result.stdout == "" && result.stderr == "", "\(result)")
            try await sim.setFault("start_discovery_held", "0")
            try await sim.expectClean()
        }
    }

    @Test("--timeout 0: a usage error, nothing sent")
    func zeroTimeout() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["doctor", "--timeout", "0"])
            #expect(run.status == 64 && run.stdout == "" && run.stderr.hasPrefix("Error: Invalid value '0' for '--timeout'"), "\(run)")
            try #expect(await sim.calls().isEmpty)
        }
    }

    /// -v traces doctor's session like every command's (it opens its session itself).
    @Test("-v: the D-Bus trace of doctor's calls on stderr, the report unchanged on stdout")
    func traced() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["-v", "doctor"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr.contains("org.freedesktop.DBus.ObjectManager.GetManagedObjects"), "\(run.stderr)")
            #expect(run.stderr.contains("org.bluez.Adapter1.StartDiscovery") && run.stderr.contains("org.bluez.Adapter1.StopDiscovery"), "\(run.stderr)")
            #expect(Self.checks(run).map(\.0) == Self.names)
        }
    }
}
