// A device its user renamed: Device1.Alias "Kitchen", Name "BLE-Probe" (fault aliased_device).
// `scan --name` matches the Alias as well as the Name; the record's name is the Name.

import SimulatorHarness
import Testing

@Suite("blectl scan --name and a device's Alias")
struct AliasTests {
    static let kitchen = "C0:FF:EE:00:00:0C"

    @Test("--name finds a device by the alias its user gave it, in any case; the record shows its Name",
          arguments: ["Kitchen", "kitch", "KITCHEN", "ble-probe"])
    func nameMatchesAlias(_ name: String) async throws {
        try await Sim.with(faults: ["aliased_device": "true"]) { sim in
            let run = await sim.blectl(["scan", "--name", name, "--count", "1", "--timeout", "20"])
            #expect(run.status == 0, "\(run)")
            let records = run.jsonLines()
            #expect(records.map { $0["address"]?.string } == [Self.kitchen], "\(run)")
            #expect(records.first?["name"] == "BLE-Probe", "\(run)")
            #expect(records.first?["alias"] == nil, "the scan record has no alias field: \(run)")
            try await sim.expectClean()
        }
    }

    @Test("--name that is neither its Name nor its Alias does not find it")
    func otherNameDoesNotMatch() async throws {
        try await Sim.with(faults: ["aliased_device": "true"]) { sim in
            let run = await sim.blectl(["scan", "--name", "Kitchen", "--name", "Probe", "--timeout", "3"])
            #expect(run.status == 0, "\(run)")
            // "Probe" matches "blesim Probe" and "BLE-Probe"; "Kitchen" only the alias.
            let addresses = Set(run.jsonLines().compactMap { $0["address"]?.string })
            #expect(addresses == [Self.kitchen, World.probe], "\(run)")
            let cellar = await sim.blectl(["scan", "--name", "Cellar", "--timeout", "2"])
            #expect(cellar.status == 0 && cellar.stdout == "", "\(cellar)")
        }
    }
}
