// `blectl scan --count`, `--address` and the fields each line gained (issue 13, item 5):
// `time`, `appearance`, `company`, `service_names`; against the simulator's default world.

import Foundation
import SimulatorHarness
import Testing

@Suite("blectl scan: --count, --address, time and SIG names")
struct ScanOptionsTests {
    @Test("time: RFC 3339 UTC with milliseconds, read while blectl ran, never going back")
    func timeField() async throws {
        try await Sim.with { sim in
            let started = Date()
            let run = await sim.blectl(["scan", "--count", "10", "--timeout", "60", "--updates", "--rssi-min", "-127"])
            let ended = Date()
            #expect(run.status == 0, "\(run)")
            let formatter = NotifyTests.dateFormatter()
            var previous = started.addingTimeInterval(-1)
            let records = run.jsonLines()
            #expect(records.count >= 10, "\(run)")
            for record in records {
                let time = try #require(record["time"]?.string, "\(record)")
                #expect(NotifyTests.isRFC3339Milliseconds(time), "\(time)")
                let date = try #require(formatter.date(from: time), "\(time)")
                // After blectl started, before it ended (a second of slack for rounding), in order.
                #expect(date >= previous && date <= ended.addingTimeInterval(1), "\(time): started \(started), ended \(ended)")
                previous = date
            }
        }
    }

    @Test("--count 3: exactly three devices, then success; discovery stopped, nothing left")
    func countEndsTheScan() async throws {
        try await Sim.with { sim in
            // A long timeout: the scan ends because of --count, not the clock.
            let run = await sim.blectl(["scan", "--timeout", "60", "--count", "3"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let addresses = run.jsonLines().compactMap { $0["address"]?.string }
            #expect(addresses.count == 3 && Set(addresses).count == 3, "\(addresses)")
            #expect(Set(addresses).isSubset(of: Set(World.known + World.fillers)))
            let members = try await sim.calls().filter { $0.interface == "org.bluez.Adapter1" }.map(\.member)
            #expect(members == ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
            try await sim.expectClean()
        }
    }

    @Test("--count with --updates counts devices, not lines: the first line of the second device is the last")
    func countWithUpdatesCountsDevices() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "60", "--updates", "--rssi-min", "-127", "--count", "2"])
            #expect(run.status == 0, "\(run)")
            let addresses = run.jsonLines().compactMap { $0["address"]?.string }
            #expect(Set(addresses).count == 2, "\(addresses)")
            // The last line is the second device's first.
            let last = try #require(addresses.last)
            #expect(addresses.firstIndex(of: last) == addresses.count - 1, "\(addresses)")
        }
    }

    @Test("--count more than there are: the timeout comes first, exit 124 after every line, as notify --count")
    func countNotReachedTimesOut() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "5", "--count", "11"])
            #expect(run.status == 124, "\(run)")
            let addresses = run.jsonLines().compactMap { $0["address"]?.string }
            #expect(Set(addresses) == Set(World.known + World.fillers), "\(addresses)")
            let error = try #require(run.jsonError())
            #expect(error["code"] == "timed_out")
            #expect(error["exit_status"] == 124)
            #expect(error["operation"] == "discovery")
            #expect(error["message"] == "timed out during discovery")
            try await sim.expectClean()
            try #expect(await sim.state().discovering == false)
        }
    }

    @Test("without --count, reaching the timeout stays success, even with nothing found")
    func noCountTimeoutIsSuccess() async throws {
        try await Sim.with { sim in
            // 5 s, not less: the scan must have started before its end (an instrumented blectl on a
            // loaded machine may take seconds to open the session and start discovery: 124).
            let run = await sim.blectl(["scan", "--timeout", "5", "--address", World.missing])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "" && run.stderr == "", "\(run)")
        }
    }

    struct AddressCase: Sendable, CustomTestStringConvertible {
        var options: [String]
        var expected: Set<String>
        var testDescription: String { options.joined(separator: " ") }
    }

    @Test("--address keeps exactly the devices named; nothing of it goes to BlueZ", arguments: [
        AddressCase(options: ["--address", World.probe], expected: [World.probe]),
        AddressCase(options: ["--address", "c0:ff:ee:00:00:02"], expected: [World.vendor]),
        AddressCase(options: ["--address", World.probe, "--address", "4A:C2:7D:11:93:E0"], expected: [World.probe, "4A:C2:7D:11:93:E0"]),
        AddressCase(options: ["--address", World.missing], expected: []),
        // With another kind of filter, both must pass.
        AddressCase(options: ["--address", World.probe, "--address", World.vendor, "--service", "180f"], expected: [World.probe]),
        AddressCase(options: ["--address", World.vendor, "--name", "probe"], expected: []),
    ])
    func address(_ filter: AddressCase) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "5"] + filter.options)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr == "")
            let addresses = run.jsonLines().compactMap { $0["address"]?.string }
            #expect(addresses.count == Set(addresses).count, "a device reported twice: \(addresses)")
            #expect(Set(addresses) == filter.expected)
            // bluetoothd's Pattern would narrow every client's discovery: not sent.
            let set = try #require(try await sim.calls().first { $0.member == "SetDiscoveryFilter" })
            #expect(set.filter?["Pattern"] == nil, "\(set)")
            #expect(set.filter?["Transport"] == .string("le"), "\(set)")
        }
    }

    @Test("--address with --count 1 ends the scan when that device is heard")
    func addressAndCount() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--timeout", "60", "--address", World.gattBattery, "--count", "1"])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonLines().compactMap { $0["address"]?.string } == [World.gattBattery])
            try await sim.expectClean()
        }
    }

    @Test("a device BlueZ only remembers is not reported for --address: it must be heard")
    func rememberedDeviceMustBeHeard() async throws {
        try await Sim.with(faults: ["cached_devices": "1"]) { sim in
            try #expect(await sim.state().devices.contains("C0:FF:EE:00:00:A2"))
            let run = await sim.blectl(["scan", "--timeout", "5", "--address", "C0:FF:EE:00:00:A2", "--count", "1"])
            #expect(run.status == 124, "\(run)")
            #expect(run.stdout == "")
        }
    }

    @Test("appearance, company and service_names of devices that have them; null or {} otherwise")
    func sigNames() async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan", "--count", "10", "--timeout", "60"])
            #expect(run.status == 0, "\(run)")
            var records: [String: J] = [:]
            for record in run.jsonLines() {
                if let address = record["address"]?.string { records[address] = record }
            }
            let probe = try #require(records[World.probe])
            #expect(probe["appearance"] == ["value": 1344, "category": "Sensor", "subcategory": .null])
            #expect(probe["company"] == ["05f1": "The Linux Foundation"])
            // The vendor UUID has no SIG name: it is left out.
            #expect(probe["service_names"] == ["180a": "Device Information", "180f": "Battery"])
            let apple = try #require(records["5E:3A:91:0C:44:21"])
            #expect(apple["company"] == ["004c": "Apple, Inc."])
            #expect(apple["appearance"] == .null)
            let tile = try #require(records["4A:C2:7D:11:93:E0"])
            #expect(tile["service_names"] == ["feed": "Tile, Inc."])
        }
    }

    @Test("usage errors: bad --count, --address, --min-interval or --lost-after; --min-interval or --changes-only without --updates, or both (64, nothing asked of BlueZ)", arguments: [
        ["--count", "0"], ["--count", "x"], ["--address", "C0:FF:EE"], ["--address"],
        ["--updates", "--min-interval", "0"], ["--updates", "--min-interval", "x"], ["--updates", "--min-interval", "-1"],
        ["--lost-after", "0"], ["--lost-after", "soon"], ["--min-interval", "1"], ["--changes-only"],
        ["--updates", "--changes-only", "--min-interval", "1"],
    ])
    func usageErrors(_ options: [String]) async throws {
        try await Sim.with { sim in
            let run = await sim.blectl(["scan"] + options)
            #expect(run.status == 64, "\(run)")
            #expect(run.stdout == "")
            #expect(run.stderr.hasPrefix("Error: "), "\(run)")
            #expect(run.stderr.contains("See 'blectl scan --help'"), "\(run)")
            try #expect(await sim.calls().isEmpty)
        }
    }
}
