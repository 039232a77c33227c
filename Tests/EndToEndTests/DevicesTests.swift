// `blectl devices` and `blectl adapters` against the simulator: exact JSON Lines, what BlueZ
// knows (cached devices included, unlike scan), the filters alone and together, the text
// tables, a powered-off adapter, a second adapter, no adapter, no bluetoothd.

import Foundation
import SimulatorHarness
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("blectl devices")
struct DevicesTests {
    static func addresses(_ run: Run) -> [String] { run.jsonLines().compactMap { $0["address"]?.string } }

    @Test("nothing known yet: no line, exit 0, nothing scanned")
    func nothingKnown() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["devices"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr == "")
            let text = await sim.blectl(["devices", "--format", "text"])
            #expect(text.status == 0 && text.stdout == "", "\(text)")
            try #expect(await sim.calls().filter { $0.interface == "org.bluez.Adapter1" } == [])
        }
    }

    /// After a scan BlueZ keeps the named connectable devices it heard (without RSSI), and
    /// drops the others: `devices` lists what it kept, where `scan --timeout 0` lists nothing.
    @Test("after a scan: the devices BlueZ kept, by address, with what it keeps of their advertising")
    func afterScan() async throws {
        try await Sim.with { sim in
            let scan = await sim.blectl(["scan", "--count", "10", "--timeout", "60"])
            #expect(scan.status == 0, "\(scan)")
            let run = await sim.blectl(["devices"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(Self.addresses(run) == World.known)
            for line in run.lines { #expect(topLevelKeys(line) == World.infoKeys, "\(line)") }
            #expect(run.jsonLines().first == [
                "address": "C0:FF:EE:00:00:01", "address_type": "public", "name": "blesim Probe", "alias": "blesim Probe",
                "paired": false, "bonded": false, "trusted": false, "blocked": false, "connected": false, "services_resolved": false,
                "rssi": .null, "tx_power": .null, "appearance": 0x0540, "icon": .null, "class": .null, "modalias": .null,
                "uuids": ["180f", "180a", .string(World.vendorService)], "manufacturer_data": ["05f1": "0102"], "service_data": [:], "decoded": [:],
                "battery_percentage": .null, "adapter": "hci0",
            ])
            let cachedScan = await sim.blectl(["scan", "--timeout", "0"])
            #expect(cachedScan.status == 0 && cachedScan.stdout == "", "\(cachedScan)")
        }
    }

    /// BlueZ 5.66 drops only the non-connectable temporary devices when discovery ends
    /// (adapter.c discovery_cleanup); a connectable one stays, named or not (the real
    /// bluetoothd kept the rig's unnamed connectable filler, realbluez test_devices).
    @Test("after a scan: connectable devices are kept named or not, non-connectable ones dropped")
    func unnamedConnectableKept() async throws {
        try await Sim.with(faults: ["weird_names": "true"]) { sim in
            let scan = await sim.blectl(["scan", "--count", "15", "--timeout", "60"])
            #expect(scan.status == 0, "\(scan)")
            let run = await sim.blectl(["devices"])
            #expect(run.status == 0, "\(run)")
            let weird = ["C0:FF:EE:00:00:E1", "C0:FF:EE:00:00:E2", "C0:FF:EE:00:00:E3", "C0:FF:EE:00:00:E4", "C0:FF:EE:00:00:E5"]
            #expect(Self.addresses(run) == (World.known + weird).sorted(), "\(run)")
            let unnamed = run.jsonLines().first { $0["address"] == "C0:FF:EE:00:00:E1" }
            #expect(unnamed?["name"] == .null && unnamed?["alias"] == "C0-FF-EE-00-00-E1" && unnamed?["rssi"] == .null, "\(run)")
        }
    }

    @Test("every device BlueZ has: cached, bonded, connected; exact records")
    func everyKnownDevice() async throws {
        try await Sim.with(faults: ["cached_devices": "1", "bonded_devices": "1", "preconnected": World.keys]) { sim in
            let run = await sim.blectl(["devices"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonLines() == [
                World.staleProbeRecord.with("address", "C0:FF:EE:00:00:A1").with("name", "blesim Stale").with("alias", "blesim Stale")
                    .with("uuids", []),
                World.staleProbeRecord, World.connectedKeysRecord, World.headsetRecord,
            ])
        }
    }

    @Test("--connected, --paired, and both (both must hold)")
    func filters() async throws {
        try await Sim.with(faults: ["cached_devices": "1", "bonded_devices": "1", "preconnected": World.probe]) { sim in
            let all = await sim.blectl(["devices"])
            #expect(Self.addresses(all) == [World.probe, World.stale, World.staleProbe, World.keys, World.headset], "\(all)")
            let connected = await sim.blectl(["devices", "--connected"])
            #expect(connected.status == 0, "\(connected)")
            #expect(Self.addresses(connected) == [World.probe])
            #expect(connected.jsonLines().first?["connected"] == true)
            #expect(connected.jsonLines().first?["services_resolved"] == true)
            #expect(connected.jsonLines().first?["battery_percentage"] == 87)
            let paired = await sim.blectl(["devices", "--paired"])
            #expect(paired.jsonLines() == [World.keysRecord, World.headsetRecord], "\(paired)")
            // Connected, or paired, but none both.
            let both = await sim.blectl(["devices", "--connected", "--paired"])
            #expect(both.status == 0, "\(both)")
            #expect(both.stdout == "")

            try await sim.setFault("preconnected", World.keys)
            let bothNow = await sim.blectl(["devices", "--paired", "--connected"])
            #expect(bothNow.jsonLines() == [World.connectedKeysRecord], "\(bothNow)")
            let connectedNow = await sim.blectl(["devices", "--connected"])
            #expect(Self.addresses(connectedNow) == [World.probe, World.keys])
            // Listing connected nothing and disconnected nothing.
            try #expect(await sim.state().connections.map(\.address).sorted() == [World.probe, World.keys])
            try #expect(await sim.calls().filter { $0.interface == "org.bluez.Device1" } == [])
        }
    }

    @Test("--format text: a header and aligned columns, every field in one")
    func textTable() async throws {
        try await Sim.with(faults: ["bonded_devices": "1"]) { sim in
            let run = await sim.blectl(["devices", "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines == [
                "ADDRESS            TYPE    FLAGS   RSSI  TX_POWER  BATTERY  NAME            ALIAS           ICON            APPEARANCE  CLASS     MODALIAS             ADAPTER  UUIDS           MANUFACTURER_DATA  SERVICE_DATA",
                "C0:FF:EE:00:00:B1  public  PBT---  -     -         -        blesim Keys     blesim Keys     input-keyboard  0x03c1      -         usb:v046Dp4023d0006  hci0     1812,180f,180a  -                  -",
                "C0:FF:EE:00:00:B2  public  PB-X--  -     -         -        blesim Headset  blesim Headset  audio-headset   -           0x240404  -                    hci0     110b,111e       -                  -",
            ])
        }
    }

    /// A table row cut at the header's column starts: header label -> cell.
    static func cells(_ row: String, header: String) -> [String: String] {
        let labels = header.split(separator: " ", omittingEmptySubsequences: true)
        let starts = labels.map { header.distance(from: header.startIndex, to: $0.startIndex) }
        var out: [String: String] = [:]
        let chars = Array(row)
        for (i, label) in labels.enumerated() {
            let from = min(starts[i], chars.count)
            let to = i + 1 < starts.count ? min(starts[i + 1], chars.count) : chars.count
            out[String(label)] = String(chars[from..<to]).trimmingCharacters(in: .whitespaces)
        }
        return out
    }

    @Test("--format text while another client scans: RSSI, TX power, advertising data in their columns")
    func textTableDuringScan() async throws {
        try await Sim.with(faults: ["preconnected": World.probe]) { sim in
            let scan = try await sim.launch(["scan", "--timeout", "60"])
            #expect(await scan.stdoutContains("4A:C2:7D:11:93:E0"), "the scan heard nothing")
            #expect(await scan.stdoutContains("7B:05:E6:40:BB:13"), "the scan heard nothing")
            let run = await sim.blectl(["devices", "--format", "text"])
            scan.sendSignal(SIGINT)
            _ = try await scan.finish()
            #expect(run.status == 0, "\(run)")
            let header = try #require(run.lines.first)
            #expect(header.split(separator: " ").map(String.init) == DevicesCommandColumns.all)
            // Every row of the table has its cells where the header says.
            #expect(run.lines.count == 11, "\(run)")
            let rows = Dictionary(run.lines.dropFirst().map { (String($0.prefix(17)), Self.cells($0, header: header)) }) { $1 }
            let probe = try #require(rows[World.probe], "\(run)")
            #expect(probe.removing("RSSI") == [
                "ADDRESS": World.probe, "TYPE": "public", "FLAGS": "----CR", "TX_POWER": "4 dBm", "BATTERY": "87%",
                "NAME": "blesim Probe", "ALIAS": "blesim Probe", "ICON": "-", "APPEARANCE": "0x0540", "CLASS": "-", "MODALIAS": "-",
                "ADAPTER": "hci0", "UUIDS": "1801,180a,180f,\(World.vendorService)", "MANUFACTURER_DATA": "05f1=0102",
                "SERVICE_DATA": "-",
            ])
            // The first sighting is -55 ± 2; the scan's 700 ms ticks move it by up to 12 dBm, and
            // a loaded machine may run `devices` after some of them (seen: -59 dBm).
            let rssi = probe["RSSI"].flatMap { $0.hasSuffix(" dBm") ? Int($0.dropLast(4)) : nil }
            #expect(rssi.map { (-67 ... -43).contains($0) } == true, "\(probe)")
            let tile = try #require(rows[World.tile], "\(run)")
            #expect(tile.removing("RSSI") == [
                "ADDRESS": World.tile, "TYPE": "random", "FLAGS": "------", "TX_POWER": "-", "BATTERY": "-",
                "NAME": "Tile", "ALIAS": "Tile", "ICON": "-", "APPEARANCE": "-", "CLASS": "-", "MODALIAS": "-",
                "ADAPTER": "hci0", "UUIDS": "feed", "MANUFACTURER_DATA": "-", "SERVICE_DATA": "feed=020031",
            ])
            let bose = try #require(rows["7B:05:E6:40:BB:13"], "\(run)")
            #expect(bose["TX_POWER"] == "-8 dBm" && bose["MANUFACTURER_DATA"] == "009e=0001" && bose["NAME"] == "LE-Bose Mini", "\(bose)")
            let unnamed = try #require(rows["6F:12:8B:DE:02:9A"], "\(run)")
            #expect(unnamed["NAME"] == "-" && unnamed["ALIAS"] == "6F-12-8B-DE-02-9A", "\(unnamed)")
        }
    }

    @Test("adapter powered off: still listed, from BlueZ's objects; the first adapter when none is powered")
    func adapterPoweredOff() async throws {
        try await Sim.with(faults: ["bonded_devices": "1", "adapter_powered_off": "1", "second_adapter": "1"]) { sim in
            let run = await sim.blectl(["devices"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonLines() == [World.keysRecord, World.headsetRecord])
            let paired = await sim.blectl(["devices", "--paired", "--format", "text"])
            #expect(paired.status == 0 && paired.lines.count == 3, "\(paired)")
            try #expect(await sim.calls().filter { $0.interface == "org.bluez.Adapter1" } == [])
        }
    }

    @Test("--adapter: that adapter's devices (none on hci1); an adapter BlueZ lacks is 69")
    func namedAdapter() async throws {
        try await Sim.with(faults: ["bonded_devices": "1", "second_adapter": "1"]) { sim in
            let hci1 = await sim.blectl(["--adapter", "hci1", "devices"])
            #expect(hci1.status == 0, "\(hci1)")
            #expect(hci1.stdout == "")
            let hci0 = await sim.blectl(["devices", "--adapter", "hci0"])
            #expect(Self.addresses(hci0) == [World.keys, World.headset])
            let missing = await sim.blectl(["devices", "--adapter", "hci4"])
            #expect(missing.status == 69, "\(missing)")
            #expect(missing.stdout == "")
            #expect(missing.jsonError() == [
                "code": "unavailable", "exit_status": 69, "retryable": false, "message": "Bluetooth adapter hci4 not found",
                "operation": "adapter", "address": .null, "service": .null, "characteristic": .null, "dbus_error": .null,
            ])
        }
    }

    @Test("no adapter at all: 69")
    func noAdapter() async throws {
        try await Sim.with(faults: ["no_adapter": "1"]) { sim in
            let run = await sim.blectl(["devices"])
            #expect(run.status == 69, "\(run)")
            #expect(run.jsonError()?["message"] == "no Bluetooth adapter")
        }
    }
}

@Suite("blectl adapters")
struct AdaptersTests {
    static let keys = ["name", "address", "alias", "powered", "power_state", "discovering", "pairable", "discoverable", "roles",
                       "connectable", "manufacturer", "manufacturer_name", "version", "version_name", "experimental_features"]

    static let hci0: J = [
        "name": "hci0", "address": "00:1A:7D:DA:71:13", "alias": "blesim-host", "powered": true, "power_state": .null,
        "discovering": false, "pairable": true, "discoverable": false, "roles": ["central", "peripheral"],
        "connectable": .null, "manufacturer": .null, "manufacturer_name": .null, "version": .null, "version_name": .null,
        "experimental_features": .null,
    ]
    static let hci1: J = [
        "name": "hci1", "address": "00:1A:7D:DA:71:14", "alias": "blesim-host #2", "powered": false, "power_state": .null,
        "discovering": false, "pairable": true, "discoverable": false, "roles": ["central"],
        "connectable": .null, "manufacturer": .null, "manufacturer_name": .null, "version": .null, "version_name": .null,
        "experimental_features": .null,
    ]

    @Test("one adapter: one line, exact; BlueZ 5.66 without --experimental has no PowerState (null)")
    func oneAdapter() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["adapters"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonLines() == [Self.hci0])
            #expect(run.lines.map(topLevelKeys) == [Self.keys])
            try #expect(await sim.calls().filter { $0.interface == "org.bluez.Adapter1" } == [])
        }
    }

    @Test("a second adapter, powered off and rfkill-blocked; PowerState with --experimental")
    func secondAdapter() async throws {
        try await Sim.with(faults: ["second_adapter": "1", "experimental": "1"]) { sim in
            let run = await sim.blectl(["adapters"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonLines() == [Self.hci0.with("power_state", "on"), Self.hci1.with("power_state", "off-blocked")])
            let named = await sim.blectl(["adapters", "--adapter", "hci1"])
            #expect(named.jsonLines() == [Self.hci1.with("power_state", "off-blocked")], "\(named)")
            // Discovering follows another client's scan.
            let scan = try await sim.launch(["scan", "--timeout", "60"])
            #expect(await scan.stdoutContains("C0:FF:EE:00:00:05"), "the scan heard nothing")
            let during = await sim.blectl(["--adapter=hci0", "adapters"])
            scan.sendSignal(SIGINT)
            _ = try await scan.finish()
            #expect(during.jsonLines() == [Self.hci0.with("power_state", "on").with("discovering", true)], "\(during)")
        }
    }

    @Test("no adapter powered: adapters still lists them all, exit 0")
    func nonePowered() async throws {
        try await Sim.with(faults: ["second_adapter": "1", "adapter_powered_off": "1", "experimental": "1"]) { sim in
            let run = await sim.blectl(["adapters"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonLines() == [Self.hci0.with("powered", false).with("power_state", "off"),
                                        Self.hci1.with("power_state", "off-blocked")])
            // Powered on again at run time: seen at once.
            try await sim.setFault("adapter_powered_off", "0")
            let again = await sim.blectl(["adapters", "--adapter", "hci0"])
            #expect(again.jsonLines() == [Self.hci0.with("power_state", "on")], "\(again)")
        }
    }

    @Test("bluetoothd without adapters: nothing printed, exit 0; only hci1: one line")
    func noAdapter() async throws {
        try await Sim.with(faults: ["no_adapter": "1"]) { sim in
            let run = await sim.blectl(["adapters"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr == "")
            let text = await sim.blectl(["adapters", "--format", "text"])
            #expect(text.status == 0 && text.stdout == "", "\(text)")
            let named = await sim.blectl(["adapters", "--adapter", "hci0"])
            #expect(named.status == 69, "\(named)")
            #expect(named.jsonError()?["message"] == "Bluetooth adapter hci0 not found")
            try await sim.setFault("second_adapter", "1")
            let one = await sim.blectl(["adapters"])
            #expect(one.jsonLines() == [Self.hci1], "\(one)")
        }
    }

    @Test("--format text: a header and aligned columns, every field in one")
    func textTable() async throws {
        try await Sim.with(faults: ["second_adapter": "1", "experimental": "1"]) { sim in
            let run = await sim.blectl(["adapters", "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.lines == [
                "NAME  ADDRESS            POWERED  POWER_STATE  DISCOVERING  PAIRABLE  DISCOVERABLE  ROLES               CONNECTABLE  MANUFACTURER  MANUFACTURER_NAME  VERSION  VERSION_NAME  EXPERIMENTAL_FEATURES  ALIAS",
                "hci0  00:1A:7D:DA:71:13  yes      on           no           yes       no            central,peripheral  -            -             -                  -        -             -                      blesim-host",
                "hci1  00:1A:7D:DA:71:14  no       off-blocked  no           yes       no            central             -            -             -                  -        -             -                      blesim-host #2",
            ])
        }
    }

    @Test("an adapter BlueZ lacks: 69 with the error object")
    func missingAdapter() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["--adapter", "hci3", "adapters"])
            #expect(run.status == 69, "\(run)")
            #expect(run.stdout == "")
            #expect(run.jsonError() == [
                "code": "unavailable", "exit_status": 69, "retryable": false, "message": "Bluetooth adapter hci3 not found",
                "operation": "adapter", "address": .null, "service": .null, "characteristic": .null, "dbus_error": .null,
            ])
        }
    }

    @Test("no bluetoothd on the bus: 69")
    func noBluetoothd() async throws {
        try await Sim.with { sim in
            let (daemon, address) = try await sim.bareBus()
            defer { daemon.sendSignal(SIGTERM); _ = daemon.wait(timeout: .seconds(3)) }
            for command in [["adapters"], ["devices"], ["info", World.probe]] {
                let run = await sim.blectl(command, environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
                #expect(run.status == 69, "\(run)")
                #expect(run.stdout == "")
                #expect(run.jsonError()?["message"] == "bluetoothd is not running (org.bluez is not on the system bus)")
            }
        }
    }
}

/// The devices table's header labels, in order (DevicesCommand.columns).
enum DevicesCommandColumns {
    static let all = ["ADDRESS", "TYPE", "FLAGS", "RSSI", "TX_POWER", "BATTERY", "NAME", "ALIAS", "ICON", "APPEARANCE",
                      "CLASS", "MODALIAS", "ADAPTER", "UUIDS", "MANUFACTURER_DATA", "SERVICE_DATA"]
}

extension Dictionary where Key == String, Value == String {
    func removing(_ key: String) -> [String: String] {
        var copy = self
        copy[key] = nil
        return copy
    }
}

extension J {
    /// The object with `key` set to `value`.
    func with(_ key: String, _ value: J) -> J {
        guard case .object(var o) = self else { return self }
        o[key] = value
        return .object(o)
    }
}
