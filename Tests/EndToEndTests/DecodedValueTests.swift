import Testing

/// `decoded` in read and notify, against the simulator's environmental sensor (fault
/// sensor_device, sim/README.md: C0:FF:EE:00:00:0E).
@Suite("Decoded characteristic values", .serialized)
struct DecodedValueTests {
    static let sensor = "C0:FF:EE:00:00:0E"
    static let presented = "5e050001-6c2d-4b8e-9f3a-0c1d2e3f4a5b"

    static func one(_ name: String, _ value: J, _ unit: J, status: String? = nil) -> J {
        var field: [String: J] = ["name": .string(name), "value": value, "unit": unit]
        if let status { field["status"] = .string(status) }
        return ["name": .string(name), "fields": .array([.object(field)])]
    }

    @Test("read: Temperature 21.5 degree Celsius, Humidity 45 %, in JSON and in text")
    func read() async throws {
        try await Sim.with(faults: ["sensor_device": "true"]) { sim in
            let temperature = await sim.blectl(["read", Self.sensor, "2a6e"])
            #expect(temperature.status == 0, "\(temperature)")
            #expect(temperature.jsonObject()?["value"] == "6608")
            #expect(temperature.jsonObject()?["decoded"] == Self.one("Temperature", .double(21.5), "degree Celsius"))
            let humidity = await sim.blectl(["read", Self.sensor, "2a6f", "--format", "text"])
            #expect(humidity.status == 0, "\(humidity)")
            #expect(humidity.lines.last == "decoded:        Humidity 45.0 percentage", "\(humidity)")
        }
    }

    @Test("read --offset: the part read is not decoded (decoded null), the whole value is")
    func offsetNotDecoded() async throws {
        try await Sim.with(faults: ["sensor_device": "true"]) { sim in
            let part = await sim.blectl(["read", Self.sensor, "2a6e", "--offset", "1"])
            #expect(part.status == 0, "\(part)")
            #expect(part.jsonObject()?["value"] == "08", "\(part)")
            #expect(part.jsonObject()?["decoded"] == .null, "\(part)")
        }
    }

    @Test("a Presentation Format descriptor that never answers: read prints the value undecoded within a few seconds, not its timeout")
    func presentationFormatUnanswered() async throws {
        try await Sim.with(faults: ["sensor_device": "true", "descriptor_read_never_answers": "true"]) { sim in
            let started = ContinuousClock.now
            let read = await sim.blectl(["read", Self.sensor, Self.presented, "--timeout", "20"])
            let took = ContinuousClock.now - started
            #expect(read.status == 0, "\(read)")
            #expect(read.jsonObject()?["value"] != nil && read.jsonObject()?["decoded"] == .null, "\(read)")
            // The descriptor gets 2 s; the command's 20 s would be spent without the limit.
            #expect(took < .seconds(15), "\(took)")
            try await sim.expectClean()
        }
    }

    @Test("read: a vendor characteristic decoded by its Presentation Format descriptor, read once")
    func presentationFormat() async throws {
        try await Sim.with(faults: ["sensor_device": "true"]) { sim in
            let vendor = await sim.blectl(["read", Self.sensor, Self.presented])
            #expect(vendor.status == 0, "\(vendor)")
            #expect(vendor.jsonObject()?["value"] == "6608")
            #expect(vendor.jsonObject()?["decoded"] == Self.one(Self.presented, .double(21.5), "degree Celsius"))
            let calls = try await sim.calls()
            #expect(calls.filter { $0.member == "ReadValue" }.map(\.interface)
                    == ["org.bluez.GattCharacteristic1", "org.bluez.GattDescriptor1"])
            // Its descriptor read with --descriptor: the bytes, not decoded.
            let descriptor = await sim.blectl(["read", Self.sensor, Self.presented, "--descriptor", "2904"])
            #expect(descriptor.jsonObject()?["value"] == "0efe2f27010000")
            #expect(descriptor.jsonObject()?["decoded"] == .null)
        }
    }

    @Test("read: a characteristic with neither a SIG format nor a Presentation Format: null")
    func noFormat() async throws {
        try await Sim.with(faults: World.toolboxFaults) { sim in
            let run = await sim.blectl(["read", World.toolbox, World.toolboxText])
            #expect(run.status == 0, "\(run)")
            #expect(run.jsonObject()?["text"] == "hello, toolbox")
            #expect(run.jsonObject()?["decoded"] == .null)
        }
    }

    @Test("notify: each Temperature reading decoded, the sentinel 0x8000 as not known")
    func notify() async throws {
        try await Sim.with(faults: ["sensor_device": "true", "notify_every_ms": "50", "notify_every_char": "2a6e"]) { sim in
            let run = await sim.blectl(["notify", Self.sensor, "2a6e", "--count", "4"])
            #expect(run.status == 0, "\(run)")
            let records = run.jsonLines()
            #expect(records.map { $0["value"]?.string ?? "?" } == ["6608", "6708", "f3fd", "0080"])
            #expect(records.map { $0["decoded"] ?? .null } == [
                Self.one("Temperature", .double(21.5), "degree Celsius"),
                Self.one("Temperature", .double(21.51), "degree Celsius"),
                Self.one("Temperature", .double(-5.25), "degree Celsius"),
                Self.one("Temperature", .null, "degree Celsius", status: "value is not known"),
            ])
            let text = await sim.blectl(["notify", Self.sensor, "2a6e", "--count", "4", "--format", "text"])
            #expect(text.status == 0, "\(text)")
            let rows = Array(text.lines.dropFirst(2))
            #expect(rows.count == 4, "\(text)")
            let decoded = ["Temperature 21.5 degree Celsius", "Temperature 21.51 degree Celsius", "Temperature -5.25 degree Celsius",
                           "Temperature value is not known"]
            for (row, cell) in zip(rows, decoded) { #expect(row.hasSuffix("  " + cell), "\(row)") }
            try await sim.expectClean()
        }
    }
}
