import Testing
@testable import BlectlCLI
import BlueZKit

/// `blectl advertise`'s options (every spelling), what it refuses at parse time, and its
/// events' records.
@Suite struct AdvertiseCommandTests {
    @Test func defaults() {
        #expect(invocation(["advertise"]) == .run(GlobalOptions(), .advertise()))
        #expect(AdvertiseCommand().advertisement == LEAdvertisement(type: .peripheral))
    }

    @Test func everyOption() {
        let arguments = ["advertise", "-n", "desk", "-s", "180f", "--service=0x180A", "--manufacturer-data", "4C:0215",
                         "--manufacturer-data=0xFFFF:01:02", "--tx-power", "--appearance", "0x03C1",
                         "--discoverable", "--type", "peripheral", "-t", "60"]
        let expected = LEAdvertisement(
            localName: "desk", serviceUUIDs: [.batteryService, .deviceInformation],
            manufacturerData: [.init(company: 0x004C, data: [0x02, 0x15]), .init(company: 0xFFFF, data: [1, 2])],
            includes: [.txPower], appearance: 961, discoverable: true)
        #expect(invocation(arguments) == .run(GlobalOptions(), .advertise(expected, timeout: .seconds(60))))
        #expect(invocation(["advertise", "--appearance", "961", "--type", "broadcast", "--service-data", "180f:64"])
                == .run(GlobalOptions(), .advertise(LEAdvertisement(type: .broadcast, serviceData: [.init(uuid: .batteryService, data: [0x64])],
                                                                    appearance: 961))))
    }

    @Test("usage errors", arguments: [
        (["advertise", "--manufacturer-data", "12345:01"],
         "Invalid value '12345:01' for '--manufacturer-data': expected a company identifier in hex, a colon and hex bytes, like 004c:0215 or 0xffff:01:02"),
        (["advertise", "--manufacturer-data", "004c"],
         "Invalid value '004c' for '--manufacturer-data': expected a company identifier in hex, a colon and hex bytes, like 004c:0215 or 0xffff:01:02"),
        (["advertise", "--service-data", "180f:"],
         "Invalid value '180f:' for '--service-data': expected a service UUID, a colon and hex bytes, like 180f:64 or fe95:0102"),
        (["advertise", "--appearance", "65536"],
         "Invalid value '65536' for '--appearance': expected a number from 0 to 65535, in decimal or in hex after 0x (0x03c1)"),
        (["advertise", "--type", "beacon"], "Invalid value 'beacon' for '--type': expected broadcast or peripheral"),
        (["advertise", "--timeout", "0"],
         "Invalid value '0' for '--timeout': expected a number of seconds (decimals allowed), more than 0, or inf"),
        (["advertise", "--manufacturer-data", "004c:01", "--manufacturer-data", "4c:02"], "--manufacturer-data 0x004c refused: given twice"),
        (["advertise", "--manufacturer-data", "ffff:" + String(repeating: "00", count: 28)],
         "--manufacturer-data 0xffff does not fit: it takes 32 bytes, and the advertising data would take 32 of 31"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let error = try #require(usageError(arguments))
        #expect(error.message == message)
        #expect(error.subcommand == "advertise")
    }

    @Test func eventRecords() {
        let address = BluetoothAddress("C0:FF:EE:00:CE:01")!
        let connected = AdvertiseCommand.record(.connected(address))
        guard case .object(let members) = connected else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == ["event", "time", "address"])
        #expect(members.last?.1 == .string("C0:FF:EE:00:CE:01"))
        let released = JSONValue.object([("event", .string("released")), ("time", .string("2026-01-01T00:00:00.000Z"))])
        #expect(AdvertiseCommand.line(released, format: .text) == "event: released  time: 2026-01-01T00:00:00.000Z")
        let lists = JSONValue.object([("services", .array([.string("180f"), .string("180a")])), ("manufacturer_data", .object([])),
                                      ("name", .null)])
        #expect(AdvertiseCommand.line(lists, format: .text) == "services: 180f,180a  manufacturer_data: -  name: -")
        #expect(AdvertiseCommand.line(lists, format: .json) == #"{"services":["180f","180a"],"manufacturer_data":{},"name":null}"#)
    }
}
