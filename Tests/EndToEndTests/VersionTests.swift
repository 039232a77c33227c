// `blectl get-version` (alias `version`): Device Information, or the vendor protocol.

import SimulatorHarness
import Testing

@Suite("blectl get-version")
struct VersionTests {
    static let probeVersion: J = [
        "address": "C0:FF:EE:00:00:01", "source": "device_information", "firmware_revision": "1.4.2",
        "hardware_revision": .null, "software_revision": .null, "manufacturer_name": "Blesim Labs", "model_number": "Probe-1",
    ]

    @Test("Device Information on blesim Probe, under both names, keys in order", arguments: ["get-version", "version"])
    func deviceInformation(_ name: String) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl([name, World.probe])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == Self.probeVersion)
            #expect(topLevelKeys(run.stdout) == ["address", "source", "firmware_revision", "hardware_revision",
                                                 "software_revision", "manufacturer_name", "model_number"])
            try await sim.expectClean()
        }
    }

    @Test("--format text: key: value lines, '-' for unknown")
    func text() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["--format", "text", "version", World.probe])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.lines == [
                "address:           C0:FF:EE:00:00:01",
                "source:            device_information",
                "firmware_revision: 1.4.2",
                "hardware_revision: -",
                "software_revision: -",
                "manufacturer_name: Blesim Labs",
                "model_number:      Probe-1",
            ])
        }
    }

    struct VendorCase: Sendable, CustomTestStringConvertible {
        var address: String
        var firmware: String
        var testDescription: String { "\(address) -> \(firmware)" }
    }

    @Test("the vendor protocol", arguments: [
        VendorCase(address: World.vendor, firmware: "2.0.7"),
        VendorCase(address: World.probe, firmware: "1.4.2"),
    ])
    func vendor(_ c: VendorCase) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["get-version", c.address] + World.vendorOptions)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == [
                "address": .string(c.address), "source": "vendor", "firmware_revision": .string(c.firmware),
                "hardware_revision": .null, "software_revision": .null, "manufacturer_name": .null, "model_number": .null,
            ])
            // Notifications were started for the answer and stopped afterwards.
            let members = try await sim.calls().map(\.member)
            #expect(members.filter { $0 == "StartNotify" }.count == 1, "\(members)")
            #expect(members.filter { $0 == "StopNotify" }.count == 1, "\(members)")
            #expect(members.contains("WriteValue"))
            try await sim.expectClean()
        }
    }

    @Test("a device without Device Information: exit 3, not_supported")
    func noDeviceInformation() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["get-version", World.plain])
            #expect(run.status == 3, "\(run)")
            #expect(run.stdout == "")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "not_supported")
            #expect(error["exit_status"] == 3)
            #expect(error["address"] == "C0:FF:EE:00:00:05")
            #expect(error["operation"] == "service_lookup")
            #expect(error["service"] == "180a")
            #expect(error["characteristic"] == .null)
            #expect(error["message"]?.string?.contains("180a") == true, "\(error)")
            try await sim.expectClean()
        }
    }
}

extension VersionTests {
    @Test("two Device Information instances: each field from the first instance that has it")
    func twoDeviceInformationInstances() async throws {
        try await Sim.with(faults: ["twin_dis_device": "true"]) { sim in
            let run = await sim.blectl(["get-version", "C0:FF:EE:00:00:0B"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            #expect(run.jsonObject() == [
                "address": "C0:FF:EE:00:00:0B", "source": "device_information", "firmware_revision": "2.0.1",
                "hardware_revision": .null, "software_revision": .null, "manufacturer_name": "Blesim Twins",
                "model_number": "Twin-1",
            ])
            // connect lists both instances.
            let connect = await sim.blectl(["connect", "C0:FF:EE:00:00:0B"])
            #expect(connect.status == 0, "\(connect)")
            let uuids = connect.jsonObject()?["services"]?.array?.compactMap { $0["uuid"]?.string }
            #expect(uuids == ["1801", "180a", "180a"], "\(connect)")
            try await sim.expectClean()
        }
    }
}
