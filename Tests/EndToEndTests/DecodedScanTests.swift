import Foundation
import Testing

/// `decoded` in scan, info and devices, and `scan --decoded`, against the simulator's beacon
/// advertisers (fault beacons, sim/README.md: :C1 to :C7).
@Suite("Decoded advertisements", .serialized)
struct DecodedScanTests {
    static let expected: [String: J] = [
        "C0:FF:EE:00:00:C1": ["ibeacon": ["proximity_uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 1, "minor": 2,
                                          "measured_power": -59]],
        "C0:FF:EE:00:00:C2": ["eddystone": ["frame": "uid", "ranging_data": -20, "namespace": "00112233445566778899",
                                            "instance": "aabbccddeeff"]],
        "C0:FF:EE:00:00:C3": ["eddystone": ["frame": "url", "tx_power": -21, "url": "https://example.org/"]],
        "C0:FF:EE:00:00:C4": ["eddystone": ["frame": "tlm", "version": 0, "vbatt": 3000, "temp": .double(21.5), "adv_cnt": 100, "sec_cnt": 1234]],
        "C0:FF:EE:00:00:C5": ["bthome": ["version": 2, "trigger_based": false, "encrypted": false, "counter": .null, "objects": [
            ["id": 0, "name": "packet_id", "value": 1, "unit": .null],
            ["id": 1, "name": "battery", "value": 95, "unit": "%"],
            ["id": 2, "name": "temperature", "value": .double(25.0), "unit": "°C"],
            ["id": 3, "name": "humidity", "value": .double(50.55), "unit": "%"],
        ]]],
        "C0:FF:EE:00:00:C6": ["bthome": ["undecodable": "object 0x03 (humidity) at byte 4: 2 bytes needed, 1 left"]],
        "C0:FF:EE:00:00:C7": ["bthome": ["undecodable": "encrypted (no bind key)"]],
    ]

    /// :C7's bind key (sim/README.md) and what its frame decrypts to with it.
    static let bindKey = "5ec12e7b1d0a4c3f8e6b2d9a7c4f1e03"
    static let decrypted: J = ["bthome": ["version": 2, "trigger_based": false, "encrypted": true, "counter": 42, "objects": [
        ["id": 0, "name": "packet_id", "value": 7, "unit": .null],
        ["id": 2, "name": "temperature", "value": .double(21.5), "unit": "°C"],
        ["id": 3, "name": "humidity", "value": .double(45.0), "unit": "%"],
    ]]]

    @Test("scan: every beacon's decoded object, the raw data kept; {} for the others")
    func scan() async throws {
        try await Sim.with(faults: ["beacons": "true"]) { sim in
            let run = await sim.blectl(["scan", "--timeout", "4"])
            #expect(run.status == 0, "\(run)")
            var seen: [String: J] = [:]
            for record in run.jsonLines() {
                let address = try #require(record["address"]?.string)
                seen[address] = record["decoded"]
            }
            for (address, decoded) in Self.expected { #expect(seen[address] == decoded, "\(address)") }
            // Other devices, Apple's non-iBeacon manufacturer data (5E:3A:91:0C:44:21) included: {}.
            for address in World.known + World.fillers { #expect(seen[address] == [:], "\(address)") }
            let bthome = try #require(run.jsonLines().first { $0["address"]?.string == "C0:FF:EE:00:00:C5" })
            #expect(bthome["service_data"] == ["fcd2": "400001015f02c40903bf13"])
        }
    }

    @Test("scan --decoded keeps only devices advertising in those formats, undecodable ones included")
    func filter() async throws {
        try await Sim.with(faults: ["beacons": "true"]) { sim in
            let run = await sim.blectl(["scan", "--timeout", "4", "--decoded", "bthome", "--decoded", "ibeacon"])
            #expect(run.status == 0, "\(run)")
            let addresses = Set(run.jsonLines().compactMap { $0["address"]?.string })
            #expect(addresses == ["C0:FF:EE:00:00:C1", "C0:FF:EE:00:00:C5", "C0:FF:EE:00:00:C6", "C0:FF:EE:00:00:C7"])
            let eddystone = await sim.blectl(["scan", "--timeout", "4", "--decoded", "eddystone", "--count", "3"])
            #expect(eddystone.status == 0, "\(eddystone)")
            #expect(Set(eddystone.jsonLines().compactMap { $0["address"]?.string }) == ["C0:FF:EE:00:00:C2", "C0:FF:EE:00:00:C3", "C0:FF:EE:00:00:C4"])
            let bad = await sim.blectl(["scan", "--decoded", "altbeacon"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("expected ibeacon, eddystone or bthome"), "\(bad)")
        }
    }

    @Test("info and its text format show the decoded beacon too")
    func infoAndText() async throws {
        try await Sim.with(faults: ["beacons": "true"]) { sim in
            let info = await sim.blectl(["info", "C0:FF:EE:00:00:C5", "--timeout", "5"])
            #expect(info.status == 0, "\(info)")
            #expect(info.jsonObject()?["decoded"] == Self.expected["C0:FF:EE:00:00:C5"])
            let text = await sim.blectl(["info", "C0:FF:EE:00:00:C5", "--format", "text"])
            #expect(text.lines.contains { $0.hasPrefix("decoded") && $0.hasSuffix(
                "bthome packet_id 1, battery 95 %, temperature 25.0 °C, humidity 50.55 %") }, "\(text)")
            let cut = await sim.blectl(["info", "C0:FF:EE:00:00:C6", "--format", "text"])
            #expect(cut.lines.contains { $0.hasSuffix("bthome undecodable (object 0x03 (humidity) at byte 4: 2 bytes needed, 1 left)") }, "\(cut)")
        }
    }

    @Test("scan, info and devices --bindkey decrypt the encrypted BTHome advertiser; a wrong key fails the MIC")
    func bindKey() async throws {
        try await Sim.with(faults: ["beacons": "true"]) { sim in
            let scan = await sim.blectl(["scan", "--timeout", "4", "--decoded", "bthome", "--bindkey", "c0:ff:ee:00:00:c7=" + Self.bindKey.uppercased()])
            #expect(scan.status == 0, "\(scan)")
            let records = Dictionary(scan.jsonLines().compactMap { r in r["address"]?.string.map { ($0, r) } }, uniquingKeysWith: { a, _ in a })
            #expect(records["C0:FF:EE:00:00:C7"]?["decoded"] == Self.decrypted)
            #expect(records["C0:FF:EE:00:00:C7"]?["service_data"] == ["fcd2": "41055633f5f74bc0d62a0000006539608e"])
            // The key of one device decrypts nothing of another's, and plain frames are as before.
            #expect(records["C0:FF:EE:00:00:C5"]?["decoded"] == Self.expected["C0:FF:EE:00:00:C5"])
            #expect(!scan.stdout.lowercased().contains(Self.bindKey) && !scan.stderr.lowercased().contains(Self.bindKey))

            let wrong = await sim.blectl(["scan", "--timeout", "4", "--decoded", "bthome",
                                          "--bindkey", "C0:FF:EE:00:00:C7=" + String(Self.bindKey.reversed())])
            #expect(wrong.status == 0, "\(wrong)")
            let lock = wrong.jsonLines().first { $0["address"]?.string == "C0:FF:EE:00:00:C7" }
            #expect(lock?["decoded"] == ["bthome": ["undecodable": "MIC check failed: wrong bind key?"]])

            // info (JSON and text) and devices, the device now known.
            let info = await sim.blectl(["info", "C0:FF:EE:00:00:C7", "--bindkey", "C0:FF:EE:00:00:C7=" + Self.bindKey])
            #expect(info.status == 0, "\(info)")
            #expect(info.jsonObject()?["decoded"] == Self.decrypted)
            let text = await sim.blectl(["info", "C0:FF:EE:00:00:C7", "--format", "text", "--bindkey", "C0:FF:EE:00:00:C7=" + Self.bindKey])
            #expect(text.lines.contains { $0.hasPrefix("decoded") && $0.hasSuffix(
                "bthome packet_id 7, temperature 21.5 °C, humidity 45.0 % (encrypted, counter 42)") }, "\(text)")
            // devices while another client scans (a non-connectable device goes when discovery stops).
            let scanning = try await sim.launch(["scan", "--timeout", "60"])
            #expect(await scanning.stdoutContains("C0:FF:EE:00:00:C7"), "the scan did not hear :C7")
            let devices = await sim.blectl(["devices", "--bindkey", "C0:FF:EE:00:00:C7=" + Self.bindKey])
            let keyless = await sim.blectl(["devices"])
            scanning.sendSignal(SIGINT)
            _ = try await scanning.finish()
            #expect(devices.status == 0, "\(devices)")
            #expect(devices.jsonLines().first { $0["address"]?.string == "C0:FF:EE:00:00:C7" }?["decoded"] == Self.decrypted, "\(devices)")
            #expect(keyless.jsonLines().first { $0["address"]?.string == "C0:FF:EE:00:00:C7" }?["decoded"] == Self.expected["C0:FF:EE:00:00:C7"])
        }
    }

    @Test("a --bindkey that is not ADDRESS=32 hex digits is a usage error that does not repeat the key", arguments: [
        ("C0:FF:EE:00:00:C7", "expected ADDRESS=KEY, a device address, '=' and its bind key of 32 hex digits"),
        ("C0:FF:EE:00:00=5ec12e7b1d0a4c3f8e6b2d9a7c4f1e03", "expected an address of six hex pairs like C0:FF:EE:00:00:01 before '='"),
        ("C0:FF:EE:00:00:C7=5ec12e7b1d0a4c3f8e6b2d9a7c4f1e", "expected a bind key of 32 hex digits (16 bytes) after '=', not 30 characters"),
        ("C0:FF:EE:00:00:C7=5ec12e7b1d0a4c3f8e6b2d9a7c4f1e0z", "expected a bind key of 32 hex digits (16 bytes) after '=', not 32 characters with other than hex digits"),
    ])
    func badBindKey(value: String, message: String) async throws {
        let sim = try await QuietSimulator.get()
        for command in [["scan"], ["info", "C0:FF:EE:00:00:C7"], ["devices"]] {
            let run = await sim.blectl(command + ["--bindkey", value])
            #expect(run.status == 64, "\(run)")
            #expect(run.stderr.hasPrefix("Error: Invalid bind key for '--bindkey': " + message + "\n"), "\(run)")
            #expect(!run.stderr.contains("5ec12e7b"), "\(run)")
            #expect(run.stdout.isEmpty)
        }
        // The same key twice (lists merged) is taken once; two keys for one address are refused.
        let same = await sim.blectl(["scan", "--timeout", "1", "--bindkey", "C0:FF:EE:00:00:C7=" + Self.bindKey,
                                     "--bindkey", "c0:ff:ee:00:00:c7=" + Self.bindKey.uppercased()])
        #expect(same.status == 0, "\(same)")
        let other = "00112233445566778899aabbccddeeff"
        let twice = await sim.blectl(["scan", "--bindkey", "C0:FF:EE:00:00:C7=" + Self.bindKey, "--bindkey", "c0:ff:ee:00:00:c7=" + other])
        #expect(twice.status == 64 && twice.stderr.hasPrefix("Error: '--bindkey' gives C0:FF:EE:00:00:C7 two different keys\n"), "\(twice)")
        #expect(!twice.stderr.contains("5ec12e7b") && !twice.stderr.contains(other), "\(twice)")
    }

}
