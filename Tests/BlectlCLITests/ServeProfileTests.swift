import Testing
@testable import BlectlCLI
import BlueZKit

/// `serve`'s profile reader: what a profile gives (the application, the name, the
/// schedules, what bluetoothd serves itself), `connect`'s informative members ignored,
/// every fault at its line and member; the JSON reader's lines and its refusals; serve's
/// options.
@Suite struct ServeProfileTests {
    static func parse(_ text: String) throws(ServeProfile.Invalid) -> ServeProfile {
        try ServeProfile.parse(text, source: "'p.json'")
    }

    static func fault(_ text: String) -> String? {
        do throws(ServeProfile.Invalid) {
            _ = try parse(text)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aWholeProfile() throws {
        let profile = try Self.parse("""
            {"address": "C0:FF:EE:00:00:01", "address_type": "public", "adapter": "hci0", "was_connected": false,
             "name": "Probe",
             "services": [
              {"uuid": "1801", "name": "GATT", "primary": true, "characteristics": []},
              {"uuid": "0x180F", "name": "Battery", "primary": false, "characteristics": [
                {"uuid": "2a19", "name": "Battery Level", "flags": ["read", "notify"], "value": "57", "notify_every": 0.5,
                 "descriptors": [{"uuid": "2902", "name": null, "value": "0100"},
                                 {"uuid": "2904", "value": "04", "value_error": null, "flags": ["read", "write"]}]},
                {"uuid": "2a1a", "flags": ["encrypt-read"], "value": null, "value_error": "not permitted"}
              ]}
            ]}
            """)
        #expect(profile.name == "Probe")
        #expect(profile.application == GATTApplication(services: [
            .init(uuid: .batteryService, primary: false, characteristics: [
                .init(uuid: .batteryLevel, flags: ["read", "notify"], value: [0x57],
                      descriptors: [.init(uuid: BluetoothUUID(uuid16: 0x2904), flags: ["read", "write"], value: [0x04])]),
                .init(uuid: BluetoothUUID(uuid16: 0x2a1a), flags: ["encrypt-read"]),
            ]),
        ]))
        #expect(profile.skipped == [.init(line: 4, field: "services[0]", uuid: .genericAttribute, reason: "bluetoothd serves 1801 itself"),
                                    .init(line: 7, field: "services[1].characteristics[0].descriptors[0]",
                                          uuid: .clientCharacteristicConfiguration, reason: "bluetoothd makes 2902 itself")])
        #expect(profile.unread == [.init(line: 9, field: "services[1].characteristics[1]", uuid: BluetoothUUID(uuid16: 0x2a1a),
                                         reason: "not permitted")])
        #expect(profile.schedules.map(\.interval) == [.milliseconds(500)])
        #expect(profile.schedules.map(\.values) == [[]])
    }

    @Test("faults at their line and member", arguments: [
        ("[]", "'p.json' line 1: expected an object, not an array"),
        ("{}", "'p.json' line 1: services: missing: a profile has an array of services"),
        ("{\"services\": [], \"extra\": 1}", "'p.json' line 1: extra: unknown member; a profile has \"name\", \"services\""),
        ("{\"services\": [{\n\"uuid\": \"18g0\"}]}", "'p.json' line 2: services[0].uuid: expected a UUID (180f, 0000180f or 128-bit), not \"18g0\""),
        ("{\"services\": [{\"uuid\": \"180f\", \"primary\": \"yes\"}]}", "'p.json' line 1: services[0].primary: expected true or false, not \"yes\""),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": []}]}]}",
         "'p.json' line 1: services[0].characteristics[0].flags: no flags: at least one is needed"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": [\"read\", \"read\"]}]}]}",
         "'p.json' line 1: services[0].characteristics[0].flags[1]: flag \"read\" given twice"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": [\"read\"], \"value\": \"" + String(repeating: "00", count: 513) + "\"}]}]}",
         "'p.json' line 1: services[0].characteristics[0].value: 513 bytes: a value holds at most 512"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": [\"notify\"], \"values\": [\"01\"]}]}]}",
         "'p.json' line 1: services[0].characteristics[0].values: values are sent in turn only with notify_every"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": [\"notify\"], \"notify_every\": 0}]}]}",
         "'p.json' line 1: services[0].characteristics[0].notify_every: expected seconds, from 0.01 to 86400, not 0"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": [\"read\"],\n\"descriptors\": [{\"uuid\": \"2901\", \"flags\": [\"notify\"]}]}]}]}",
         "'p.json' line 2: services[0].characteristics[0].descriptors[0].flags[0]: unknown flag \"notify\"; BlueZ's are authorize, encrypt-authenticated-read, encrypt-authenticated-write, encrypt-read, encrypt-write, read, secure-read, secure-write, write"),
        ("{\"services\": [{\"uuid\": \"1800\"}, {\"uuid\": \"1801\"}]}", "'p.json' line 1: services: no service to serve (bluetoothd serves 1800 and 1801 itself)"),
        ("{\"name\": 7, \"services\": []}", "'p.json' line 1: name: expected a non-empty string or null, not 7"),
        ("{\"services\": [{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": [\"notify\"], \"notify_every\": 0.0001}]}]}",
         "'p.json' line 1: services[0].characteristics[0].notify_every: expected seconds, from 0.01 to 86400, not 0.0001"),
        ("{\"services\": [" + Array(repeating: "{\"uuid\": \"180f\", \"characteristics\": [{\"uuid\": \"2a19\", \"flags\": [\"read\"]}]}",
                                    count: 21_839).joined(separator: ",") + "]}",
         "'p.json' line 1: services: 65517 attribute handles: bluetoothd has 65515 left for applications"),
    ] as [(String, String)])
    func faults(_ text: String, _ message: String) {
        #expect(Self.fault(text) == message)
    }

    @Test func byteOrderMarkAndTheAdvertisement() throws {
        let profile = try Self.parse("\u{FEFF}{\"name\": \"n\", \"services\": [{\"uuid\": \"180f\", \"primary\": false}, {\"uuid\": \"180a\"}]}")
        // A secondary service is not advertised.
        let advertisement = try ServeCommand.advertisement(for: profile, name: profile.name, source: .path("p.json"))
        #expect(advertisement.serviceUUIDs == [.deviceInformation])
        let nul = try Self.parse("{\"name\": \"a\\u0000b\", \"services\": [{\"uuid\": \"180f\"}]}")
        #expect(throws: ServeProfile.Invalid(source: "'p.json'", line: 1, field: "name",
                                             message: "a NUL character (D-Bus strings cannot carry one)")) {
            _ = try ServeCommand.advertisement(for: nul, name: nul.name, source: .path("p.json"))
        }
    }

    @Test("the JSON reader's refusals, at their line", arguments: [
        ("{\"services\": [\n1,\n]}", "'p.json' line 3: unexpected character: expected a value"),
        ("{\"a\": 1, \"a\": 2}", "'p.json' line 1: member \"a\" given twice"),
        ("{\"services\": []} x", "'p.json' line 1: text after the end of the JSON value"),
        ("{\"services\": [\"\\q\"]}", "'p.json' line 1: unknown escape \\q"),
        ("{\"services\": [01]}", "'p.json' line 1: \"01\" is not a JSON number"),
        ("{\"name\": \"open\n\"}", "'p.json' line 1: a string not closed before the end of its line"),
        ("{\"services\": [", "'p.json' line 1: unexpected end of the text: a value was expected"),
        (String(repeating: "[", count: 65) + String(repeating: "]", count: 65), "'p.json' line 1: nested deeper than 64 levels"),
    ] as [(String, String)])
    func syntax(_ text: String, _ message: String) {
        #expect(Self.fault(text) == message)
    }

    @Test func jsonValues() throws {
        let node = try JSONDocument.parse("{\"s\": \"a\\u00e9\\ud83d\\ude00\\n\", \"n\": -1.5e2, \"t\": true, \"z\": null,\n\"l\": [1, {}]}")
        guard case .string(let text)? = node["s"]?.value, case .number(let number)? = node["n"]?.value else {
            Issue.record("\(node)")
            return
        }
        #expect(text == "aé😀\n")
        #expect(number == -150)
        #expect(node["l"]?.line == 2)
        #expect(node["z"]?.kind == "null")
    }

    @Test func options() {
        let profile = InputSource.path("dev.json")
        var expected = ServeCommand()
        expected.profile = profile
        #expect(invocation(["serve", "dev.json"]) == .run(GlobalOptions(), Subcommand(expected)))
        expected.name = "desk"
        expected.noAdvertise = true
        expected.timeout = .seconds(30)
        #expect(invocation(["serve", "dev.json", "-n", "desk", "--no-advertise", "-t", "30"]) == .run(GlobalOptions(), Subcommand(expected)))
        let error = usageError(["serve", "dev.json", "--name", String(repeating: "x", count: 30)])
        #expect(error?.message == "--name does not fit: 30 bytes, an advertised name holds at most 29")
        #expect(usageError(["serve"])?.message.contains("<profile>") == true)
    }
}
