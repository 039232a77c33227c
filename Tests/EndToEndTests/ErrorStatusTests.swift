// Every exit status the simulator can provoke, with the JSON error object on stderr
// (code, exit_status, message, operation, address, service, characteristic, dbus_error),
// nothing on stdout, and nothing left behind in BlueZ.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("exit statuses and error objects")
struct ErrorStatusTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var faults: [String: String] = [:]
        var arguments: [String]
        var status: Int32
        var code: String
        /// The error object's `retryable`: a transient failure (``--retries`` would try it again).
        var retryable = false
        var message: Message
        var operation: J = .null
        var address: J = .null
        var service: J = .null
        var characteristic: J = .null
        var dbusError: J = .null
        /// For a timeout at a stage held by the simulator: the call that stage waits on, and
        /// its last outcome in the call log (nil: any), so it reached BlueZ: the stages before
        /// it were done within the timeout.
        var reached: String? = nil
        var reachedOutcome: String? = "pending"
        var testDescription: String { "\(status) \(label)" }

        enum Message: Sendable {
            case exactly(String)
            case prefix(String)
        }
    }

    static let probe = J.string(World.probe)

    @Test("error object", arguments: [
        // The most common transient failure: its own code (status 1 as before), retryable.
        Case(label: "connect fails (connect_fail)", faults: ["connect_fail": "le-connection-abort-by-remote"],
             arguments: ["get-battery", World.probe], status: 1, code: "connection_aborted", retryable: true,
             message: .exactly("connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: le-connection-abort-by-remote"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        // What a real bluetoothd 5.66 answers the second of two clients connecting one
        // device at once (EALREADY passed on as Failed): waited for until --timeout, then
        // busy, not a BlueZ failure.
        Case(label: "another client is connecting (connect_fail EALREADY)",
             faults: ["connect_fail": "Operation already in progress"],
             arguments: ["get-battery", World.probe, "--timeout", "2"], status: 5, code: "busy", retryable: true,
             message: .exactly("busy: connect on C0:FF:EE:00:00:01: Operation already in progress"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "a remembered device that does not advertise (cached_devices)",
             faults: ["cached_devices": "1", "connect_timeout_ms": "300"],
             arguments: ["connect", "C0:FF:EE:00:00:A1"], status: 1, code: "connection_aborted", retryable: true,
             message: .exactly("connect on C0:FF:EE:00:00:A1 failed: org.bluez.Error.Failed: le-connection-abort-by-local"),
             operation: "connect", address: "C0:FF:EE:00:00:A1", dbusError: "org.bluez.Error.Failed"),
        // A Connect that never brought the link up is a connect failure (BlueZ's error name
        // kept) or, when BlueZ dropped the device object, not found: never "disconnected".
        Case(label: "Connect answered 'Not connected' (connect_fail)", faults: ["connect_fail": "Not connected"],
             arguments: ["connect", World.probe], status: 1, code: "bluez_failed",
             message: .exactly("connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: Not connected"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        // BlueZ's other reasons: transient ones retryable (a controller out of links, a
        // kernel connection timeout, ECONNABORTED's text), the rest not.
        Case(label: "no free link in the controller (connect_fail le-connection-concurrent-connection-limit)",
             faults: ["connect_fail": "le-connection-concurrent-connection-limit"],
             arguments: ["connect", World.probe], status: 1, code: "bluez_failed", retryable: true,
             message: .exactly("connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: le-connection-concurrent-connection-limit"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "Connect aborted, errno text (connect_fail 'Software caused connection abort')",
             faults: ["connect_fail": "Software caused connection abort"],
             arguments: ["connect", World.probe], status: 1, code: "connection_aborted", retryable: true,
             message: .exactly("connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: Software caused connection abort"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "the link layer's protocol error (connect_fail le-connection-link-layer-protocol-error)",
             faults: ["connect_fail": "le-connection-link-layer-protocol-error"],
             arguments: ["connect", World.probe], status: 1, code: "bluez_failed",
             message: .exactly("connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: le-connection-link-layer-protocol-error"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "keys the device no longer has (connect_fail le-connection-key-missing)",
             faults: ["connect_fail": "le-connection-key-missing"],
             arguments: ["connect", World.probe], status: 1, code: "bluez_failed",
             message: .exactly("connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: le-connection-key-missing"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "every Connect aborts (connect_abort_times -1)", faults: ["connect_abort_times": "-1"],
             arguments: ["get-battery", World.probe], status: 1, code: "connection_aborted", retryable: true,
             message: .exactly("connect on C0:FF:EE:00:00:01 failed: org.bluez.Error.Failed: le-connection-abort-by-local"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "the device object goes away under every Connect (remove_device_during_connect_times -1)",
             faults: ["remove_device_during_connect_times": "-1"],
             arguments: ["connect", World.probe], status: 2, code: "device_not_found", retryable: true,
             message: .exactly("device C0:FF:EE:00:00:01 not found"), operation: "device_lookup", address: probe),
        Case(label: "no such device", arguments: ["get-battery", World.missing, "--timeout", "5"], status: 2,
             code: "device_not_found", retryable: true, message: .exactly("device C0:FF:EE:00:00:99 not found"),
             operation: "device_lookup", address: "C0:FF:EE:00:00:99"),
        Case(label: "no Device Information service", arguments: ["get-version", World.battery1], status: 3,
             code: "not_supported", message: .exactly("not supported by the device: no GATT service 180a (Device Information) on C0:FF:EE:00:00:03"),
             operation: "service_lookup", address: "C0:FF:EE:00:00:03", service: "180a"),
        // bluetoothd would pass the write on whatever the Flags say (the rig's peripheral took
        // it and its Battery Level changed): refused before anything is sent.
        Case(label: "vendor write characteristic not writable",
             arguments: ["get-version", World.probe, "--vendor-service", "180f", "--vendor-write", "2a19", "--vendor-notify", "2a19"],
             status: 3, code: "not_supported",
             message: .exactly("not supported by the device: characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01 cannot be written (flags: read notify)"),
             operation: "write", address: probe, service: "180f", characteristic: "2a19"),
        Case(label: "vendor write characteristic missing",
             arguments: ["get-version", World.probe, "--vendor-service", World.vendorService,
                         "--vendor-write", "5a1e00ff-6c2d-4b8e-9f3a-0c1d2e3f4a5b", "--vendor-notify", World.vendorNotify],
             status: 3, code: "not_supported",
             message: .exactly("not supported by the device: no characteristic 5a1e00ff-6c2d-4b8e-9f3a-0c1d2e3f4a5b in service \(World.vendorService) on C0:FF:EE:00:00:01"),
             operation: "service_lookup", address: probe, service: .string(World.vendorService),
             characteristic: "5a1e00ff-6c2d-4b8e-9f3a-0c1d2e3f4a5b"),
        Case(label: "device removed while resolving (remove_device_during_resolve)",
             faults: ["remove_device_during_resolve": "1"], arguments: ["connect", World.probe], status: 4,
             code: "disconnected", retryable: true, message: .exactly("disconnected during service resolution on C0:FF:EE:00:00:01"),
             operation: "service_resolution", address: probe),
        Case(label: "link drops during a read (disconnect_mid_read)", faults: ["disconnect_mid_read": "1"],
             arguments: ["get-battery", World.gattBattery], status: 4, code: "disconnected", retryable: true,
             message: .exactly("disconnected during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:04"),
             operation: "read", address: "C0:FF:EE:00:00:04", service: "180f", characteristic: "2a19"),
        Case(label: "Connect in progress (connect_in_progress)", faults: ["connect_in_progress": "1"],
             arguments: ["connect", World.probe, "--timeout", "2"], status: 5, code: "busy", retryable: true,
             message: .exactly("busy: connect on C0:FF:EE:00:00:01: In Progress"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.InProgress"),
        Case(label: "discovery always in progress (start_discovery_in_progress)", faults: ["start_discovery_in_progress": "-1"],
             arguments: ["scan", "--timeout", "30"], status: 5, code: "busy", retryable: true,
             message: .exactly("busy: discovery: adapter busy: discovery could not start (Operation already in progress)"),
             operation: "discovery", dbusError: "org.bluez.Error.InProgress"),
        Case(label: "no adapter (no_adapter)", faults: ["no_adapter": "1"], arguments: ["scan", "--timeout", "30"],
             status: 69, code: "unavailable", message: .exactly("no Bluetooth adapter"), operation: "adapter"),
        Case(label: "no adapter for a device command", faults: ["no_adapter": "1"], arguments: ["get-battery", World.probe],
             status: 69, code: "unavailable", message: .exactly("no Bluetooth adapter"), operation: "adapter", address: probe),
        Case(label: "adapter powered off (adapter_powered_off)", faults: ["adapter_powered_off": "1"],
             arguments: ["connect", World.probe], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 is powered off"), operation: "adapter", address: probe),
        Case(label: "adapter powered off, scan", faults: ["adapter_powered_off": "1"], arguments: ["scan", "--timeout", "30"],
             status: 69, code: "unavailable", message: .exactly("Bluetooth adapter hci0 is powered off"), operation: "adapter"),
        Case(label: "--adapter names an adapter that does not exist", arguments: ["--adapter", "hci1", "scan", "--timeout", "30"],
             status: 69, code: "unavailable", message: .exactly("Bluetooth adapter hci1 not found"), operation: "adapter"),
        // rfkill: off at once, with a hint (PowerState "off-blocked", bluetoothd --experimental or >= 5.64).
        Case(label: "adapter blocked by rfkill (adapter_rfkill_blocked)", faults: ["adapter_rfkill_blocked": "1", "experimental": "1"],
             arguments: ["get-battery", World.probe, "--timeout", "30"], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 is blocked by rfkill (try 'rfkill unblock bluetooth')"),
             operation: "adapter", address: probe),
        Case(label: "adapter off with PowerState 'off' (experimental)", faults: ["adapter_powered_off": "1", "experimental": "1"],
             arguments: ["connect", World.probe, "--timeout", "30"], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 is powered off"), operation: "adapter", address: probe),
        Case(label: "bluetoothd leaves the bus (bluez_exit_on Connect)", faults: ["bluez_exit_on": "Connect"],
             arguments: ["connect", World.probe], status: 69, code: "unavailable",
             message: .exactly("bluetoothd left the system bus during connect on C0:FF:EE:00:00:01"), operation: "connect", address: probe),
        // bluetoothd drops the links before it leaves the bus (or reports Powered false):
        // that is Bluetooth going away, not the device (found on the real bluetoothd).
        Case(label: "bluetoothd stops during a read (bluez_stop_on ReadValue)", faults: ["bluez_stop_on": "ReadValue"],
             arguments: ["get-battery", World.gattBattery], status: 69, code: "unavailable",
             message: .exactly("bluetoothd left the system bus during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:04"),
             operation: "read", address: "C0:FF:EE:00:00:04", service: "180f", characteristic: "2a19"),
        Case(label: "bluetoothd stops during connect (bluez_stop_on Connect)", faults: ["bluez_stop_on": "Connect"],
             arguments: ["get-version", World.probe], status: 69, code: "unavailable",
             message: .exactly("bluetoothd left the system bus during connect on C0:FF:EE:00:00:01"), operation: "connect", address: probe),
        Case(label: "bluetoothd stops during discovery (bluez_stop_on StartDiscovery)", faults: ["bluez_stop_on": "StartDiscovery"],
             arguments: ["scan", "--timeout", "30"], status: 69, code: "unavailable",
             message: .exactly("bluetoothd left the system bus during discovery"), operation: "discovery"),
        // Powered off, blocked by rfkill or removed while a stage runs: 69 with the reason and
        // the stage, whatever BlueZ answered the call in flight (org.bluez.Error.Failed, kept).
        Case(label: "adapter powered off during a read (power_off_on ReadValue)", faults: ["power_off_on": "ReadValue"],
             arguments: ["get-battery", World.gattBattery], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was powered off during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:04"),
             operation: "read", address: "C0:FF:EE:00:00:04", service: "180f", characteristic: "2a19"),
        Case(label: "adapter powered off during Connect (power_off_on Connect)", faults: ["power_off_on": "Connect"],
             arguments: ["connect", World.probe], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was powered off during connect on C0:FF:EE:00:00:01"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "adapter powered off during StartDiscovery (power_off_on StartDiscovery)", faults: ["power_off_on": "StartDiscovery"],
             arguments: ["scan", "--timeout", "30"], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was powered off during discovery"),
             operation: "discovery", dbusError: "org.bluez.Error.Failed"),
        Case(label: "adapter powered off during SetDiscoveryFilter, looking for a device (power_off_on SetDiscoveryFilter)",
             faults: ["power_off_on": "SetDiscoveryFilter"], arguments: ["get-battery", World.probe], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was powered off during discovery"),
             operation: "discovery", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "adapter powered off during a write (power_off_on WriteValue)", faults: ["power_off_on": "WriteValue", "toolbox_device": "1"],
             arguments: ["write", World.toolbox, World.toolboxText, "01"], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was powered off during write of characteristic \(World.toolboxText) in service \(World.toolboxService) on C0:FF:EE:00:00:06"),
             operation: "write", address: .string(World.toolbox), service: .string(World.toolboxService), characteristic: .string(World.toolboxText)),
        Case(label: "adapter powered off during AcquireNotify (power_off_on AcquireNotify)", faults: ["power_off_on": "AcquireNotify"],
             arguments: ["notify", World.probe, "2a19"], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was powered off during notification setup of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01"),
             operation: "notification_setup", address: probe, service: "180f", characteristic: "2a19"),
        Case(label: "adapter powered off during Pair (power_off_on Pair)", faults: ["power_off_on": "Pair"],
             arguments: ["pair", World.probe], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was powered off during pairing on C0:FF:EE:00:00:01"),
             operation: "pair", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "rfkill blocks the adapter during Connect (rfkill_block_on Connect)", faults: ["rfkill_block_on": "Connect", "experimental": "1"],
             arguments: ["connect", World.probe], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was blocked by rfkill during connect on C0:FF:EE:00:00:01 (try 'rfkill unblock bluetooth')"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "adapter removed during Connect (remove_adapter_on Connect)", faults: ["remove_adapter_on": "Connect"],
             arguments: ["connect", World.probe], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was removed during connect on C0:FF:EE:00:00:01"),
             operation: "connect", address: probe, dbusError: "org.bluez.Error.Failed"),
        Case(label: "adapter removed during a read (remove_adapter_on ReadValue)", faults: ["remove_adapter_on": "ReadValue"],
             arguments: ["read", World.probe, "2a19"], status: 69, code: "unavailable",
             message: .exactly("Bluetooth adapter hci0 was removed during read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01"),
             operation: "read", address: probe, service: "180f", characteristic: "2a19"),
        Case(label: "access denied, scan (access_denied)", faults: ["access_denied": "1"], arguments: ["scan", "--timeout", "30"],
             status: 77, code: "permission_denied", message: .prefix("permission denied by the D-Bus policy: "),
             operation: "bus", dbusError: "org.freedesktop.DBus.Error.AccessDenied"),
        Case(label: "access denied, get-version", faults: ["access_denied": "1"], arguments: ["get-version", World.probe],
             status: 77, code: "permission_denied", message: .prefix("permission denied by the D-Bus policy: "),
             operation: "bus", address: probe, dbusError: "org.freedesktop.DBus.Error.AccessDenied"),
        // The bus set-up is a stage like any other: a sub-second --timeout bounds it.
        Case(label: "GetManagedObjects never answered, --timeout 0.3 (get_managed_objects_held)",
             faults: ["get_managed_objects_held": "1"], arguments: ["devices", "--timeout", "0.3"], status: 124, code: "timed_out",
             message: .exactly("timed out during the connection to the system bus"), operation: "bus", reached: "GetManagedObjects"),
        Case(label: "GetManagedObjects never answered, connect (get_managed_objects_held)",
             faults: ["get_managed_objects_held": "1"], arguments: ["connect", World.probe, "--timeout", "0.5"], status: 124, code: "timed_out",
             message: .exactly("timed out during the connection to the system bus"), operation: "bus", address: probe,
             reached: "GetManagedObjects"),
        Case(label: "Connect never answered (connect_never_answers)", faults: ["connect_never_answers": "1"],
             arguments: ["connect", World.probe, "--timeout", "5"], status: 124, code: "timed_out",
             message: .exactly("timed out during connect on C0:FF:EE:00:00:01"), operation: "connect", address: probe,
             reached: "Connect", reachedOutcome: "error:org.bluez.Error.Failed"),
        Case(label: "services never resolved (services_resolved_never)", faults: ["services_resolved_never": "1"],
             arguments: ["connect", World.probe, "--timeout", "5"], status: 124, code: "timed_out",
             message: .exactly("timed out during service resolution on C0:FF:EE:00:00:01"),
             operation: "service_resolution", address: probe, reached: "Connect", reachedOutcome: "reply"),
        Case(label: "read never answered (read_never_answers)", faults: ["read_never_answers": "1"],
             arguments: ["get-version", World.probe, "--timeout", "5"], status: 124, code: "timed_out",
             message: .exactly("timed out during read of characteristic 2a26 (Firmware Revision String) in service 180a (Device Information) on C0:FF:EE:00:00:01"),
             operation: "read", address: probe, service: "180a", characteristic: "2a26", reached: "ReadValue",
             reachedOutcome: nil),
        Case(label: "vendor answer never comes (no_notification)", faults: ["no_notification": "1"],
             arguments: ["get-battery", World.vendor, "--timeout", "5"] + World.vendorOptions, status: 124, code: "timed_out",
             message: .exactly("timed out waiting for the response notification of characteristic \(World.vendorNotify) in service \(World.vendorService) on C0:FF:EE:00:00:02"),
             operation: "response", address: "C0:FF:EE:00:00:02", service: .string(World.vendorService),
             characteristic: .string(World.vendorNotify), reached: "WriteValue", reachedOutcome: "reply"),
    ])
    func errorObject(_ c: Case) async throws {
        try await Sim.with(faults: c.faults) { sim in
            let run = await sim.blectl(c.arguments)
            #expect(run.status == c.status, "\(run)")
            #expect(run.stdout == "", "\(run)")
            let error = try #require(run.jsonError())
            #expect(topLevelKeys(String(run.stderr.dropFirst("{\"error\":".count))) == World.errorKeys, "\(run.stderr)")
            #expect(error["code"] == .string(c.code))
            #expect(error["exit_status"] == .int(Int(c.status)))
            #expect(error["retryable"] == .bool(c.retryable))
            #expect(error["operation"] == c.operation)
            #expect(error["address"] == c.address)
            #expect(error["service"] == c.service)
            #expect(error["characteristic"] == c.characteristic)
            #expect(error["dbus_error"] == c.dbusError)
            let message = try #require(error["message"]?.string)
            switch c.message {
            case .exactly(let text): #expect(message == text)
            case .prefix(let text): #expect(message.hasPrefix(text), "\(message)")
            }
            if let reached = c.reached {
                let outcomes = try await sim.calls().scenarioOutcomes(reached)
                #expect(!outcomes.isEmpty && (c.reachedOutcome == nil || outcomes.last == c.reachedOutcome), "\(reached): \(outcomes)")
            }
            // Whatever failed, nothing blectl started is left (bluez_exit_on took BlueZ away).
            if c.faults["bluez_exit_on"] == nil && c.faults["bluez_stop_on"] == nil && c.faults["remove_adapter_on"] == nil {
                try await sim.expectClean()
            }
        }
    }

    @Test("--format text: 'blectl: error: <message>' on stderr, nothing on stdout")
    func textError() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["get-battery", World.missing, "--timeout", "5", "--format", "text"])
            #expect(run.status == 2, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr == "blectl: error: device C0:FF:EE:00:00:99 not found\n")
        }
    }

    @Test("bluetoothd gone from the bus after it left: 69, not running")
    func bluezGone() async throws {
        try await Sim.with(faults: ["bluez_exit_on": "Connect"]) { sim in
            let first = await sim.blectl(["connect", World.probe])
            #expect(first.status == 69, "\(first)")
            try #expect(await sim.state().bluezRunning == false)
            let run = await sim.blectl(["scan", "--timeout", "30"])
            #expect(run.status == 69, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "unavailable")
            #expect(error["message"] == "bluetoothd is not running (org.bluez is not on the system bus)")
        }
    }

    @Test("a bus where nobody owns org.bluez: 69")
    func bareBus() async throws {
        try await Sim.with { sim in
            let (daemon, address) = try await sim.bareBus()
            defer { daemon.sendSignal(SIGTERM); _ = daemon.wait(timeout: .seconds(3)) }
            let run = await sim.blectl(["get-version", World.probe], environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
            #expect(run.status == 69, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "unavailable")
            #expect(error["exit_status"] == 69)
            #expect(error["message"] == "bluetoothd is not running (org.bluez is not on the system bus)")
            #expect(error["operation"] == "bus")
            #expect(error["dbus_error"] == "org.freedesktop.DBus.Error.NameHasNoOwner")
            // The simulator, on another bus, heard nothing.
            try #expect(await sim.calls() == [])
        }
    }

    struct BusCase: Sendable, CustomTestStringConvertible {
        var address: String
        var messagePrefix: String
        /// libdbus's error name for the failed connection.
        var dbusError: String
        var testDescription: String { address }
    }

    @Test("no system bus at the address: 69, stage bus, libdbus's error name kept", arguments: [
        BusCase(address: "unix:path=/nonexistent/blectl-e2e-socket",
                messagePrefix: "cannot connect to the system bus: Failed to connect to socket /nonexistent/blectl-e2e-socket",
                dbusError: "org.freedesktop.DBus.Error.FileNotFound"),
        BusCase(address: "bogus", messagePrefix: "cannot connect to the system bus: Address does not contain a colon",
                dbusError: "org.freedesktop.DBus.Error.BadAddress"),
    ])
    func noBus(_ c: BusCase) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "30"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": c.address])
            #expect(run.status == 69, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "unavailable")
            #expect(error["operation"] == "bus")
            #expect(error["dbus_error"] == .string(c.dbusError))
            #expect(error["message"]?.string?.hasPrefix(c.messagePrefix) == true, "\(error)")
        }
    }

    @Test("adapter powered off mid-scan: 69 after the lines already printed")
    func powerOffMidScan() async throws {
        try await Sim.with(faults: ["power_off_mid_scan_ms": "500"]) { sim in
            let run = await sim.blectl(["scan", "--timeout", "30"])
            #expect(run.status == 69, "\(run)")
            let addresses = Set(run.jsonLines().compactMap { $0["address"]?.string })
            #expect(addresses == Set(World.known + World.fillers))
            let error = try #require(run.jsonError())
            #expect(error["code"] == "unavailable")
            #expect(error["message"] == "Bluetooth adapter hci0 was powered off during discovery")
            #expect(error["operation"] == "discovery")
            try await sim.expectClean()
        }
    }
}
