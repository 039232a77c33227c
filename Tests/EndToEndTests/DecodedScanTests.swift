import Testing

/// `decoded` in scan, info and devices, and `scan --decoded`, against the simulator's beacon
/// advertisers (fault beacons, sim/README.md: :C1 to :C6).
@Suite("Decoded advertisements", .serialized)
struct DecodedScanTests {
    static let expected: [String: J] = [
        "C0:FF:EE:00:00:C1": ["ibeacon": ["proximity_uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0", "major": 1, "minor": 2,
                                          "measured_power": -59]],
        "C0:FF:EE:00:00:C2": ["eddystone": ["frame": "uid", "ranging_data": -20, "namespace": "00112233445566778899",
                                            "instance": "aabbccddeeff"]],
        "C0:FF:EE:00:00:C3": ["eddystone": ["frame": "url", "tx_power": -21, "url": "https://example.org/"]],
        "C0:FF:EE:00:00:C4": ["eddystone": ["frame": "tlm", "version": 0, "vbatt": 3000, "temp": .double(21.5), "adv_cnt": 100, "sec_cnt": 1234]],
        "C0:FF:EE:00:00:C5": ["bthome": ["version": 2, "trigger_based": false, "objects": [
            ["id": 0, "name": "packet_id", "value": 1, "unit": .null],
            ["id": 1, "name": "battery", "value": 95, "unit": "%"],
            ["id": 2, "name": "temperature", "value": .double(25.0), "unit": "°C"],
            ["id": 3, "name": "humidity", "value": .double(50.55), "unit": "%"],
        ]]],
        "C0:FF:EE:00:00:C6": ["bthome": ["undecodable": "object 0x03 (humidity) at byte 4: 2 bytes needed, 1 left"]],
    ]

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
            #expect(addresses == ["C0:FF:EE:00:00:C1", "C0:FF:EE:00:00:C5", "C0:FF:EE:00:00:C6"])
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
}
