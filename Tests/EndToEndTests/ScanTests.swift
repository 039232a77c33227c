// `blectl scan` against the simulator's world: JSON Lines with exact values, the text
// table, every filter keeping what it must and dropping what it must.

import Foundation
import SimulatorHarness
import Testing

@Suite("blectl scan")
struct ScanTests {
    /// The records of the five named devices, without `rssi` (which jitters by ±2 dBm
    /// around the base value in the second element) and `time` (checked apart).
    static let knownRecords: [String: (record: J, rssi: Int)] = [
        World.probe: (["address": "C0:FF:EE:00:00:01", "address_type": "public", "name": "blesim Probe", "tx_power": 4,
                       "appearance": ["value": 1344, "category": "Sensor", "subcategory": .null],
                       "uuids": ["180f", "180a", .string(World.vendorService)], "manufacturer_data": ["05f1": "0102"],
                       "company": ["05f1": "The Linux Foundation"], "service_data": [:],
                       "service_names": ["180a": "Device Information", "180f": "Battery"], "decoded": [:],
                       "connected": false, "adapter": "hci0"], -55),
        World.vendor: (["address": "C0:FF:EE:00:00:02", "address_type": "public", "name": "blesim Vendor", "tx_power": .null,
                        "appearance": .null, "uuids": [.string(World.vendorService)], "manufacturer_data": [:], "company": [:],
                        "service_data": [:], "service_names": [:], "decoded": [:], "connected": false, "adapter": "hci0"], -60),
        World.battery1: (["address": "C0:FF:EE:00:00:03", "address_type": "public", "name": "blesim Battery1", "tx_power": .null,
                          "appearance": .null, "uuids": [], "manufacturer_data": [:], "company": [:], "service_data": [:],
                          "service_names": [:], "decoded": [:], "connected": false, "adapter": "hci0"], -62),
        World.gattBattery: (["address": "C0:FF:EE:00:00:04", "address_type": "public", "name": "blesim GattBattery", "tx_power": .null,
                             "appearance": .null, "uuids": ["180f"], "manufacturer_data": [:], "company": [:], "service_data": [:],
                             "service_names": ["180f": "Battery"], "decoded": [:], "connected": false, "adapter": "hci0"], -64),
        World.plain: (["address": "C0:FF:EE:00:00:05", "address_type": "public", "name": "blesim Plain", "tx_power": .null,
                       "appearance": .null, "uuids": [], "manufacturer_data": [:], "company": [:], "service_data": [:],
                       "service_names": [:], "decoded": [:], "connected": false, "adapter": "hci0"], -66),
        // Two of the random-address fillers: service data (0xFEED, a member UUID of Tile),
        // and manufacturer data (Apple's company identifier) without a name.
        "4A:C2:7D:11:93:E0": (["address": "4A:C2:7D:11:93:E0", "address_type": "random", "name": "Tile", "tx_power": .null,
                               "appearance": .null, "uuids": ["feed"], "manufacturer_data": [:], "company": [:],
                               "service_data": ["feed": "020031"], "service_names": ["feed": "Tile, Inc."], "decoded": [:],
                               "connected": false, "adapter": "hci0"], -81),
        "5E:3A:91:0C:44:21": (["address": "5E:3A:91:0C:44:21", "address_type": "random", "name": .null, "tx_power": .null,
                               "appearance": .null, "uuids": [], "manufacturer_data": ["004c": "100501182d4e11"],
                               "company": ["004c": "Apple, Inc."], "service_data": [:], "service_names": [:], "decoded": [:],
                               "connected": false, "adapter": "hci0"], -78),
    ]

    @Test("JSON Lines: one record per device heard, keys in order, exact values; discovery stopped")
    func jsonLines() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--count", "10", "--timeout", "60"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let records = run.jsonLines()
            let addresses = records.compactMap { $0["address"]?.string }
            #expect(addresses.count == 10, "\(addresses)")
            #expect(Set(addresses) == Set(World.known + World.fillers))
            for line in run.lines {
                #expect(topLevelKeys(line) == World.scanKeys, "\(line)")
            }
            for record in records {
                guard let address = record["address"]?.string else { continue }
                // Each device's first line: first heard and last heard now.
                #expect(record["first_seen"] == record["time"] && record["last_seen"] == record["time"], "\(record)")
                if let (expected, base) = Self.knownRecords[address] {
                    #expect(record.removing("rssi", "time", "first_seen", "last_seen") == expected)
                    let rssi = try #require(record["rssi"]?.int, "\(record)")
                    #expect((base - 2...base + 2).contains(rssi), "\(address) rssi \(rssi)")
                } else {
                    #expect(record["connected"] == false)
                    #expect(record["adapter"] == "hci0")
                    #expect(record["address_type"] == "random")
                }
            }
            // Discovery was started once, and stopped.
            let members = try await sim.calls().filter { $0.interface == "org.bluez.Adapter1" }.map(\.member)
            #expect(members == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
            try await sim.expectClean()
            try #expect(await sim.state().discovering == false)
        }
    }

    @Test("--format text: a header, then one row per device with every field in its column")
    func textTable() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--count", "10", "--timeout", "60", "--format", "text"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines.count == 11, "\(run)")
            #expect(run.lines.allSatisfy { J.parse($0) == nil })
            let header = try #require(run.lines.first)
            #expect(header == "ADDRESS            TYPE    RSSI      TX_POWER  CONNECTED  ADAPTER  TIME                      "
                + "FIRST_SEEN                NAME                  APPEARANCE              MANUFACTURER_DATA                     SERVICE_DATA                  UUIDS")
            func row(_ address: String) throws -> [String: String] {
                let line = try #require(run.lines.first { $0.hasPrefix(address + "  ") }, "\(run)")
                return Self.cells(header: header, row: line)
            }
            var probe = try row(World.probe)
            #expect(probe.removeValue(forKey: "RSSI")?.hasSuffix(" dBm") == true, "\(probe)")
            let time = probe.removeValue(forKey: "TIME")
            #expect(time?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(probe)")
            #expect(probe.removeValue(forKey: "FIRST_SEEN") == time, "\(probe)")
            #expect(probe == ["ADDRESS": World.probe, "TYPE": "public", "TX_POWER": "4 dBm", "CONNECTED": "no", "ADAPTER": "hci0",
                              "NAME": "blesim Probe", "APPEARANCE": "0x0540 Sensor", "MANUFACTURER_DATA": "05f1=0102 (The Linux Foundation)",
                              "SERVICE_DATA": "-", "UUIDS": "180f (Battery),180a (Device Information),\(World.vendorService)"])
            var unnamed = try row("6F:12:8B:DE:02:9A")
            #expect(unnamed.removeValue(forKey: "RSSI")?.hasSuffix(" dBm") == true, "\(unnamed)")
            #expect(unnamed.removeValue(forKey: "TIME") != nil, "\(unnamed)")
            #expect(unnamed.removeValue(forKey: "FIRST_SEEN") != nil, "\(unnamed)")
            #expect(unnamed == ["ADDRESS": "6F:12:8B:DE:02:9A", "TYPE": "random", "TX_POWER": "-", "CONNECTED": "no", "ADAPTER": "hci0",
                                "NAME": "-", "APPEARANCE": "-", "MANUFACTURER_DATA": "-", "SERVICE_DATA": "-", "UUIDS": "-"])
            #expect(try row("4A:C2:7D:11:93:E0")["SERVICE_DATA"] == "feed=020031 (Tile, Inc.)")
            #expect(try row(World.plain)["NAME"] == "blesim Plain")
        }
    }

    /// The cells of `row` under each column of `header` (a column starts where its header
    /// word does), trimmed.
    static func cells(header: String, row: String) -> [String: String] {
        let h = Array(header), r = Array(row)
        let starts = h.indices.filter { h[$0] != " " && ($0 == 0 || h[$0 - 1] == " ") }
        var result: [String: String] = [:]
        for (n, start) in starts.enumerated() {
            let end = n + 1 < starts.count ? starts[n + 1] : max(h.count, r.count)
            let name = String(h[start ..< min(end, h.count)]).trimmingCharacters(in: .whitespaces)
            result[name] = start < r.count ? String(r[start ..< min(end, r.count)]).trimmingCharacters(in: .whitespaces) : ""
        }
        return result
    }

    struct FilterCase: Sendable, CustomTestStringConvertible {
        var options: [String]
        var expected: Set<String>
        var testDescription: String { options.joined(separator: " ") }
    }

    @Test("filters keep exactly the matching devices", arguments: [
        FilterCase(options: ["--name", "Probe"], expected: [World.probe]),
        FilterCase(options: ["--name", "pRoBe"], expected: [World.probe]),
        FilterCase(options: ["--name", "Vendor", "--name", "plain"], expected: [World.vendor, World.plain]),
        FilterCase(options: ["--name", "blesim"], expected: Set(World.known)),
        FilterCase(options: ["--service", "180f"], expected: [World.probe, World.gattBattery]),
        FilterCase(options: ["--service", "0x180F", "--service", World.vendorService],
                   expected: [World.probe, World.vendor, World.gattBattery]),
        FilterCase(options: ["--service", "0000180a-0000-1000-8000-00805f9b34fb"], expected: [World.probe]),
        FilterCase(options: ["--service", "feed"], expected: ["4A:C2:7D:11:93:E0"]),
        // Every kind of filter given must pass.
        FilterCase(options: ["--name", "blesim", "--service", "180f"], expected: [World.probe, World.gattBattery]),
        FilterCase(options: ["--name", "Vendor", "--service", "180f"], expected: []),
        FilterCase(options: ["--name", "nobody-has-this-name"], expected: []),
    ])
    func filters(_ filter: FilterCase) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "5"] + filter.options)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let addresses = run.jsonLines().compactMap { $0["address"]?.string }
            #expect(addresses.count == Set(addresses).count, "a device reported twice: \(addresses)")
            #expect(Set(addresses) == filter.expected)
        }
    }

    @Test("--rssi-min -60 keeps the strong devices and drops the weak ones")
    func rssiMin() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "5", "--rssi-min", "-60"])
            #expect(run.status == 0, "\(run)")
            let records = run.jsonLines()
            let addresses = Set(records.compactMap { $0["address"]?.string })
            #expect(addresses.contains(World.probe), "\(run)")
            // :02 advertises at -60 ± 2: it may or may not pass; the rest are weaker than -60.
            #expect(addresses.isSubset(of: [World.probe, World.vendor]), "\(addresses)")
            for record in records {
                let rssi = try #require(record["rssi"]?.int)
                #expect(rssi >= -60, "\(record)")
            }
            // The threshold went to BlueZ too.
            let filter = try await sim.calls().first { $0.member == "SetDiscoveryFilter" }
            #expect(filter?.outcome == "reply")
            #expect(filter?.filter?["RSSI"] == .number(-60), "\(String(describing: filter))")
        }
    }

    @Test("--updates prints repeated sightings; without it each device once")
    func updates() async throws {
        try await Sim.with { sim in
            // An RSSI filter makes BlueZ report every RSSI change (sim/README.md, Timing).
            let run = await sim.blectl(["scan", "--timeout", "5", "--updates", "--rssi-min", "-127"])
            #expect(run.status == 0, "\(run)")
            let records = run.jsonLines()
            let addresses = records.compactMap { $0["address"]?.string }
            #expect(Set(addresses) == Set(World.known + World.fillers))
            #expect(addresses.count > Set(addresses).count, "no update line: \(addresses)")
            // Every line of one device has its static fields.
            for record in records where record["address"] == .string(World.probe) {
                #expect(record.removing("rssi", "time", "first_seen", "last_seen") == Self.knownRecords[World.probe]!.record)
            }

            let once = await sim.blectl(["scan", "--timeout", "5", "--rssi-min", "-127"])
            #expect(once.status == 0, "\(once)")
            let onceAddresses = once.jsonLines().compactMap { $0["address"]?.string }
            #expect(onceAddresses.count == Set(onceAddresses).count, "\(onceAddresses)")
            #expect(Set(onceAddresses) == Set(World.known + World.fillers))
        }
    }

    @Test("--timeout 0 checks BlueZ answers and starts no discovery")
    func timeoutZero() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "0"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr == "")
            let calls = try await sim.calls()
            #expect(calls.map(\.member) == ["GetManagedObjects"], "\(calls)")
        }
    }

    @Test("devices BlueZ remembers but does not hear are not printed")
    func cachedDevicesNotPrinted() async throws {
        try await Sim.with(faults: ["cached_devices": "1"]) { sim in
            try #expect(await sim.state().devices.contains("C0:FF:EE:00:00:A2"))
            let run = await sim.blectl(["scan", "--timeout", "5", "--name", "probe"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonLines().compactMap { $0["address"]?.string } == [World.probe])
        }
    }

    @Test("names with control characters stay valid JSON; text shows them as '?'")
    func weirdNames() async throws {
        try await Sim.with(faults: ["weird_names": "1"]) { sim in
            let run = await sim.blectl(["scan", "--count", "15", "--timeout", "60"])
            #expect(run.status == 0, "\(run)")
            #expect(!run.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "raw control character on stdout")
            var names: [String: J] = [:]
            for record in run.jsonLines() {
                if let address = record["address"]?.string { names[address] = record["name"] }
            }
            #expect(names["C0:FF:EE:00:00:E1"] == .null)
            #expect(names["C0:FF:EE:00:00:E2"] == .null)
            #expect(names["C0:FF:EE:00:00:E3"] == "bad\u{01}\u{1b}[31mname\n")
            #expect(names["C0:FF:EE:00:00:E4"] == "caf\u{FFFD} probe")
            #expect(names["C0:FF:EE:00:00:E5"] == .null)

            let text = await sim.blectl(["scan", "--count", "1", "--timeout", "60", "--format", "text", "--name", "bad"])
            #expect(text.status == 0, "\(text)")
            #expect(text.lines.count == 2, "\(text)")
            #expect(text.lines.last.map { Self.cells(header: text.lines[0], row: $0)["NAME"] } == "bad??[31mname?", "\(text)")
            #expect(!text.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        }
    }
}
