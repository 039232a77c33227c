// `--format text` shows every field the JSON record has. Each test derives the record's keys
// from the JSON object itself (nested ones as `services.characteristics.flags`) and looks
// for each one's place in the text: a `key:` line in key-value forms, its column in tables
// (the header is the key in capitals unless an alias below says otherwise), or the explicit
// place given here. A field added to a record later, without a place in text, fails here.

import DBusKit
import Testing
@testable import BlectlCLI
@testable import BlueZKit

@Suite("--format text: every JSON field has its place")
struct TextFormatTests {
    // MARK: - Fixtures: every field set, each to a value found nowhere else

    static let address = BluetoothAddress("C0:FF:EE:00:00:B1")!
    static let devicePath: ObjectPath = "/org/bluez/hci1/dev_C0_FF_EE_00_00_B1"
    static let deviceProperties: [String: DBusValue] = [
        "Address": .string("C0:FF:EE:00:00:B1"), "AddressType": .string("random"), "Name": .string("blesim Keys"),
        "Alias": .string("My keyboard"), "Paired": .boolean(true), "Bonded": .boolean(false), "Trusted": .boolean(true),
        "Blocked": .boolean(false), "Connected": .boolean(true), "ServicesResolved": .boolean(false),
        "RSSI": .int16(-61), "TxPower": .int16(-8), "Appearance": .uint16(0x03C1), "Icon": .string("input-keyboard"),
        "Class": .uint32(0x240404), "Modalias": .string("usb:v046Dp4023d0006"),
        "UUIDs": .stringArray(["00001812-0000-1000-8000-00805f9b34fb"]),
        "ManufacturerData": .dictionary(keySignature: "q", valueSignature: "v", [.init(.uint16(0x05F1), .variant(.bytes([1, 2])))]),
        "ServiceData": .dictionary(keySignature: "s", valueSignature: "v",
                                   [.init(.string("0000feed-0000-1000-8000-00805f9b34fb"), .variant(.bytes([2, 0, 0x31])))]),
        "Adapter": .objectPath("/org/bluez/hci1"),
    ]
    static var advertisement: Advertisement { Advertisement(path: devicePath, properties: ObjectCache.Properties(deviceProperties))! }
    static var deviceInfo: DeviceInfo { DeviceInfo(path: devicePath, device: ObjectCache.Properties(deviceProperties), battery: ["Percentage": .byte(73)])! }
    static var adapterInfo: AdapterInfo {
        AdapterInfo(path: "/org/bluez/hci1", properties: [
            "Address": .string("00:AA:01:00:00:23"), "Alias": .string("bench host"), "Powered": .boolean(true),
            "PowerState": .string("on"), "Discovering": .boolean(false), "Pairable": .boolean(true), "Discoverable": .boolean(false),
            "Roles": .stringArray(["central", "peripheral"]), "Connectable": .boolean(true), "Manufacturer": .uint16(0x0002),
            "Version": .byte(0x0C), "ExperimentalFeatures": .stringArray(["671b10b5-42c0-4696-9227-eb28d1b049d6"]),
        ])
    }

    static let battery = BluetoothUUID("180f")!, level = BluetoothUUID("2a19")!, ccc = BluetoothUUID("2902")!
    static var characteristic: GATTCharacteristic {
        GATTCharacteristic(path: "/c", uuid: level, service: battery, flags: ["read", "notify"],
                           descriptors: [GATTDescriptor(path: "/d", uuid: ccc, characteristic: level, service: battery)])
    }
    static var services: [GATTService] {
        [GATTService(path: "/s", uuid: battery, primary: false, characteristics: [characteristic])]
    }

    // MARK: - Checks

    /// Every key of `json`; the keys of objects in arrays (records within the record, such as
    /// connect's services) as dotted paths. An object value is a map (`manufacturer_data`):
    /// its keys are data, not fields.
    static func keys(_ json: JSONValue, prefix: String = "") -> [String] {
        guard case .object(let members) = json else { return [] }
        return members.flatMap { key, value in
            if case .array(let values) = value, let first = values.first {
                return [prefix + key] + keys(first, prefix: prefix + key + ".")
            }
            return [prefix + key]
        }
    }

    /// Checks that each key of `json` has its place in `text`: one of `places` (a key to the
    /// text that shows it), else a `key:` line (top-level keys of key-value forms).
    static func check(_ json: JSONValue, _ text: [String], places: [String: String] = [:],
                      sourceLocation: SourceLocation = #_sourceLocation) {
        let all = text.joined(separator: "\n")
        let jsonKeys = keys(json)
        for key in jsonKeys {
            if let place = places[key] {
                #expect(all.contains(place), "'\(key)' should show as \(place.debugDescription) in:\n\(all)", sourceLocation: sourceLocation)
            } else {
                #expect(text.contains { $0.hasPrefix(key + ":") }, "JSON field '\(key)' has no place in the text:\n\(all)",
                        sourceLocation: sourceLocation)
            }
        }
        for key in places.keys where !jsonKeys.contains(key) {
            Issue.record("stale place for '\(key)', not a JSON field", sourceLocation: sourceLocation)
        }
    }

    /// The cells of `row` under each column of `header` (columns start where the header's
    /// words do; cells trimmed).
    static func cells(header: String, row: String) -> [String: String] {
        let h = Array(header), r = Array(row)
        var starts: [Int] = []
        for i in h.indices where h[i] != " " && (i == 0 || h[i - 1] == " ") { starts.append(i) }
        var result: [String: String] = [:]
        for (n, start) in starts.enumerated() {
            let end = n + 1 < starts.count ? starts[n + 1] : max(h.count, r.count)
            let name = String(h[start ..< min(end, h.count)]).trimmingSpaces
            result[name] = start < r.count ? String(r[start ..< min(end, r.count)]).trimmingSpaces : ""
        }
        return result
    }

    /// Checks a table: every key of `json` has a column (its name in capitals, or
    /// `aliases[key]`) whose cell in `row` is `values[key]`; a key without a value given fails.
    static func checkTable(_ json: JSONValue, header: String, row: String, values: [String: String],
                           aliases: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) {
        let table = cells(header: header, row: row)
        // decoded is left out of the tables (info's key: value text shows it).
        let jsonKeys = keys(json).filter { $0 != "decoded" }
        for key in jsonKeys {
            let column = aliases[key] ?? key.uppercased()
            guard let expected = values[key] else {
                Issue.record("JSON field '\(key)' has no place in the table (no value given for column \(column))", sourceLocation: sourceLocation)
                continue
            }
            #expect(table[column] == expected, "column \(column) for '\(key)':\n\(header)\n\(row)", sourceLocation: sourceLocation)
        }
        for key in values.keys where !jsonKeys.contains(key) {
            Issue.record("stale place for '\(key)', not a JSON field", sourceLocation: sourceLocation)
        }
        #expect(table.count == Set(jsonKeys.map { aliases[$0] ?? $0.uppercased() }).count, "columns without a JSON field: \(header)",
                sourceLocation: sourceLocation)
    }

    static let deviceValues: [String: String] = [
        "address": "C0:FF:EE:00:00:B1", "address_type": "random", "name": "blesim Keys", "rssi": "-61 dBm", "tx_power": "-8 dBm",
        "uuids": "1812", "manufacturer_data": "05f1=0102", "service_data": "feed=020031", "adapter": "hci1",
    ]

    // MARK: - One test per record

    @Test("scan: a header, then each field in its column")
    func scan() throws {
        let advertisement = Self.advertisement  // one instance: its receivedAt is when it was made
        let firstSeen = ScanSighting.FirstSeen(advertisement.receivedAt - .seconds(75))
        let sighting = ScanSighting(advertisement, firstSeen: firstSeen)
        let json = ScanCommand.record(sighting, adapter: "hci1")
        let lines = [ScanCommand.textHeader, ScanCommand.text(sighting, adapter: "hci1")]
        let manufacturer = "05f1=0102 (The Linux Foundation)", uuids = "1812 (Human Interface Device)"
        let feed = try #require(AssignedNumbers.name(for: BluetoothUUID("feed")!))
        Self.checkTable(json, header: lines[0], row: lines[1], values: Self.deviceValues.merging([
            "connected": "yes", "appearance": "0x03c1 Keyboard", "time": Records.rfc3339(sinceEpoch: advertisement.receivedAt),
            "first_seen": Records.rfc3339(sinceEpoch: advertisement.receivedAt - .seconds(75)),
            // last_seen is the time, shown once, in TIME.
            "last_seen": Records.rfc3339(sinceEpoch: advertisement.receivedAt),
            "manufacturer_data": manufacturer, "company": manufacturer, "uuids": uuids, "service_names": uuids,
            "service_data": "feed=020031 (\(feed))",
        ]) { $1 }, aliases: ["address_type": "TYPE", "company": "MANUFACTURER_DATA", "service_names": "UUIDS", "last_seen": "TIME"])
        // Every name service_names gives (here 1812's, from UUIDs, and feed's, from the service
        // data alone) is in the row.
        guard case .object(let members) = json, case .object(let named)? = members.first(where: { $0.0 == "service_names" })?.1 else {
            Issue.record("no service_names object in \(json.serialized())")
            return
        }
        #expect(named.count == 2)
        for (uuid, name) in named {
            guard case .string(let name) = name else { Issue.record("\(uuid): not a string"); continue }
            #expect(lines[1].contains("\(uuid)=") ? lines[1].contains("\(uuid)=020031 (\(name))") : lines[1].contains("\(uuid) (\(name))"),
                    "service_names \(uuid): \(name) not in the row: \(lines[1])")
        }
    }

    @Test("devices: each field in its column, the six booleans in FLAGS")
    func devices() {
        let json = InfoCommand.record(Self.deviceInfo)
        let lines = DevicesCommand.table([Self.deviceInfo])
        let flags = "P-T-C-"
        var values = Self.deviceValues.merging([
            "alias": "My keyboard", "icon": "input-keyboard", "appearance": "0x03c1", "class": "0x240404",
            "modalias": "usb:v046Dp4023d0006", "battery_percentage": "73%",
        ]) { $1 }
        var aliases = ["address_type": "TYPE", "battery_percentage": "BATTERY"]
        for key in ["paired", "bonded", "trusted", "blocked", "connected", "services_resolved"] {
            values[key] = flags
            aliases[key] = "FLAGS"
        }
        Self.checkTable(json, header: lines[0], row: lines[1], values: values, aliases: aliases)
    }

    @Test("adapters: each field in its column")
    func adapters() {
        let json = AdaptersCommand.record(Self.adapterInfo)
        let lines = AdaptersCommand.table([Self.adapterInfo])
        Self.checkTable(json, header: lines[0], row: lines[1], values: [
            "name": "hci1", "address": "00:AA:01:00:00:23", "alias": "bench host", "powered": "yes", "power_state": "on",
            "discovering": "no", "pairable": "yes", "discoverable": "no", "roles": "central,peripheral",
            "connectable": "yes", "manufacturer": "2", "manufacturer_name": "Intel Corp.", "version": "12", "version_name": "5.3",
            "experimental_features": "671b10b5-42c0-4696-9227-eb28d1b049d6",
        ])
    }

    @Test("info: a key: value line per field")
    func info() {
        Self.check(InfoCommand.record(Self.deviceInfo), InfoCommand.text(Self.deviceInfo))
    }

    @Test("connect: the device's fields, then the tree with primary or secondary, flags and descriptors")
    func connect() {
        let json = ConnectCommand.record(Self.address, adapter: "hci1", advertisement: Self.advertisement, wasConnected: true,
                                         services: Self.services)
        let text = ConnectCommand.text(Self.address, adapter: "hci1", advertisement: Self.advertisement, wasConnected: true,
                                       services: Self.services)
        Self.check(json, text, places: [
            "services.uuid": "  service 180f", "services.name": "180f (Battery)", "services.primary": "  secondary",
            "services.characteristics": "    characteristic ",
            "services.characteristics.uuid": "characteristic 2a19", "services.characteristics.name": "2a19 (Battery Level)",
            "services.characteristics.flags": "[read, notify]", "services.characteristics.descriptors": "      descriptor ",
            "services.characteristics.descriptors.uuid": "descriptor 2902",
            "services.characteristics.descriptors.name": "2902 (Client Characteristic Configuration)",
        ])
        #expect(text.contains("was_connected: yes"), "\(text)")
    }

    @Test("connect --values: each value, or why it could not be read, at the end of its line")
    func connectValues() {
        let tree = [
            "services.uuid": "  service 180f", "services.name": "180f (Battery)", "services.primary": "  secondary",
            "services.characteristics": "    characteristic ",
            "services.characteristics.uuid": "characteristic 2a19", "services.characteristics.name": "2a19 (Battery Level)",
            "services.characteristics.flags": "[read, notify]", "services.characteristics.descriptors": "      descriptor ",
            "services.characteristics.descriptors.uuid": "descriptor 2902",
            "services.characteristics.descriptors.name": "2902 (Client Characteristic Configuration)",
        ]
        func check(_ values: GATTValues, _ places: [String: String], sourceLocation: SourceLocation = #_sourceLocation) {
            Self.check(ConnectCommand.record(Self.address, adapter: "hci1", advertisement: Self.advertisement, wasConnected: true,
                                             services: Self.services, values: values),
                       ConnectCommand.text(Self.address, adapter: "hci1", advertisement: Self.advertisement, wasConnected: true,
                                           services: Self.services, values: values),
                       places: tree.merging(places) { $1 }, sourceLocation: sourceLocation)
        }
        check(GATTValues(["/c": .value([0x57]), "/d": .value([0x00, 0x00])]), [
            "services.characteristics.value": "[read, notify]  value: 57",
            "services.characteristics.descriptors.value": "(Client Characteristic Configuration)  value: 0000",
        ])
        check(GATTValues(["/c": .failed("read not permitted: org.bluez.Error.NotPermitted: Not paired"), "/d": .value([])]), [
            "services.characteristics.value": "[read, notify]  value_error: ",
            "services.characteristics.value_error": "[read, notify]  value_error: read not permitted: org.bluez.Error.NotPermitted: Not paired",
            "services.characteristics.descriptors.value": "(Client Characteristic Configuration)  value: (empty)",
        ])
    }

    @Test("get-version, get-battery: every field")
    func probes() {
        let info = DeviceInformation(source: .deviceInformation, firmwareRevision: "1.2.3", hardwareRevision: "B", softwareRevision: "s7",
                                     manufacturerName: "blesim", modelNumber: "BS-1")
        Self.check(GetVersionCommand.record(info, address: Self.address), GetVersionCommand.text(info, address: Self.address))
        let reading = BatteryReading(percentage: 73, source: .gatt)
        Self.check(GetBatteryCommand.record(reading, address: Self.address), GetBatteryCommand.text(reading, address: Self.address),
                   places: ["address": "C0:FF:EE:00:00:B1  ", "percentage": "  73%", "source": "(gatt)"])
    }

    @Test("read, write, write --file, request: every field")
    func toolbox() {
        Self.check(ReadCommand.record(Self.address, Self.characteristic, descriptor: Self.ccc, value: [0x57]),
                   ReadCommand.text(Self.address, Self.characteristic, descriptor: Self.ccc, value: [0x57]))
        Self.check(WriteCommand.record(Self.address, Self.characteristic, length: 3, type: .command),
                   WriteCommand.text(Self.address, Self.characteristic, length: 3, type: .command))
        let stream = WriteFile.Record(address: Self.address, characteristic: Self.characteristic,
                                      transfer: .init(bytes: 1000, packets: 5, duration: .milliseconds(250)), mtu: 203, acquired: true)
        Self.check(stream.json, stream.text)
        Self.check(RequestCommand.record(Self.address, request: [1], responses: [[0x57], [0xff]]),
                   RequestCommand.text(Self.address, request: [1], responses: [[0x57], [0xff]]),
                   places: ["responses.value": "  1: 57", "responses.text": "57  \"W\""])
    }

    @Test("disconnect, pair, unpair: every field")
    func linkAndPairing() {
        Self.check(DisconnectCommand.record(Self.address, wasConnected: true), DisconnectCommand.text(Self.address, wasConnected: true))
        let state = PairingState(paired: true, bonded: true, trusted: false)
        Self.check(PairCommand.record(state, address: Self.address), PairCommand.text(state, address: Self.address))
        let removal = UnpairCommand.Removal(wasPaired: true, wasConnected: false)
        Self.check(UnpairCommand.record(removal, address: Self.address), UnpairCommand.text(removal, address: Self.address))
    }

    @Test("notify: the device, service and characteristic first, then a column per field of each value")
    func notify() {
        let value = NotifiedValue(bytes: [0x57], connection: 2, receivedAt: .seconds(1_796_026_502) + .milliseconds(47))
        let json = NotifyCommand.record(value, seq: 7, address: Self.address, service: Self.battery, characteristic: Self.level)
        let lines = NotifyCommand.textHeader(address: Self.address, characteristic: Self.characteristic) + [NotifyCommand.text(value, seq: 7, format: .format(for: Self.level))]
        #expect(lines.count == 3)
        #expect(lines[0] == "address: C0:FF:EE:00:00:B1  service: 180f (Battery)  characteristic: 2a19 (Battery Level)")
        let table = Self.cells(header: lines[1], row: lines[2])
        for key in Self.keys(json) {
            switch key {
            case "address", "service", "characteristic": #expect(lines[0].contains("\(key): "))
            default: #expect(table[key.uppercased()] != nil, "JSON field '\(key)' has no column: \(lines[1])")
            }
        }
        #expect(table == ["TIME": "2026-11-30T08:15:02.047Z", "SEQ": "7", "CONNECTION": "2", "VALUE": "57", "TEXT": "\"W\"",
                          "DECODED": "Battery Level 87 percentage"])
    }
}

private extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
