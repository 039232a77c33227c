import DBusKit
import SimulatorHarness
import Testing
@testable import BlectlCLI
@testable import BlueZKit

/// `scan`'s JSON lines, written straight into a batch, against the record as an object: for
/// advertisements with every field present, absent, empty or in need of escaping, written one
/// after another as a scan writes a batch (the time within one second, then the next), each
/// line is `ScanCommand.record(...).serialized()` byte for byte, then a newline.
@Suite(.cpuBound) struct ScanJSONLineTests {
    @Test(arguments: ["hci0", "hci\"1\\é"])
    func eachLineIsTheRecordSerialized(_ adapter: String) {
        var generator = SplitMix64(seed: 0x5CA7)
        let layout = ScanCommand.layout(adapter: adapter)
        var batch = JSONLines()
        var expected: [UInt8] = []
        var time = Duration.seconds(1_796_026_502) + .microseconds(47_999)
        for _ in 0..<400 {
            let advertisement = Self.randomAdvertisement(at: time, using: &generator)
            // First heard up to a minute before (a second apart from time, mostly).
            let firstSeen = ScanSighting.FirstSeen(time - .milliseconds(Int.random(in: 0...60_000, using: &generator)))
            let sighting = ScanSighting(advertisement, firstSeen: firstSeen)
            layout.appendLine(sighting, to: &batch)
            expected += ScanCommand.record(sighting, adapter: adapter).serializedUTF8() + [UInt8(ascii: "\n")]
            time += .milliseconds(Int.random(in: 0...400, using: &generator))
        }
        #expect(String(decoding: batch.bytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
    }

    /// Times the per-second cache does not take (before the epoch, a fraction before it,
    /// past the year 9999, the least Duration) and a jump back: each line is still the record.
    @Test(arguments: [Duration.seconds(Int64.min), .zero, .seconds(-1), .milliseconds(-500), .seconds(253_402_300_800) + .milliseconds(7),
                      .seconds(1_796_026_502), .seconds(86_399) + .milliseconds(999)])
    func oddTimesAreTheRecordsToo(_ first: Duration) {
        var generator = SplitMix64(seed: 7)
        let layout = ScanCommand.layout(adapter: "hci0")
        var lines = JSONLines()
        for time in [first, first, .seconds(1_796_026_502) + .milliseconds(1), first] {
            let sighting = ScanSighting(Self.randomAdvertisement(at: time, using: &generator))
            lines.removeAll()
            layout.appendLine(sighting, to: &lines)
            let expected = ScanCommand.record(sighting, adapter: "hci0").serialized() + "\n"
            #expect(String(decoding: lines.bytes, as: UTF8.self) == expected)
        }
    }

    /// `service_names`: a UUID both listed and with service data is named once, in UUID order.
    @Test func serviceNamesNameEachUUIDOnce() {
        let battery = BluetoothUUID("180f")!, info = BluetoothUUID("180a")!, tile = BluetoothUUID("feed")!
        let names = ServiceNamesJSON(uuids: [tile, battery, info, battery], serviceData: [battery: [0x64], tile: []])
        #expect(names.jsonValue.serialized() == #"{"180a":"Device Information","180f":"Battery","feed":"Tile, Inc."}"#)
        #expect(ServiceNamesJSON(uuids: [], serviceData: [:]).jsonValue.serialized() == "{}")
    }

    static let bthome = BluetoothUUID("fcd2")!
    static let eddystone = BluetoothUUID("feaa")!
    /// Apple's iBeacon: type 0x02, length 0x15, proximity UUID, major 1, minor 2, -59 dBm.
    static let iBeacon: [UInt8] = [0x02, 0x15] + Array(0xE2...0xF1) + [0x00, 0x01, 0x00, 0x02, 0xC5]
    /// BTHome v2: battery 97 %, temperature 25.00 °C, humidity 50.55 %, a text "a\"b".
    static let bthomeFrame: [UInt8] = [0x40, 0x01, 0x61, 0x02, 0xC4, 0x09, 0x03, 0xBF, 0x13, 0x53, 0x03, 0x61, 0x22, 0x62]
    /// BTHome v2: a button press, a dimmer turned 3 steps.
    static let bthomeEvents: [UInt8] = [0x44, 0x3A, 0x01, 0x3C, 0x01, 0x03]
    static let eddystoneURL: [UInt8] = [0x10, 0xEB, 0x03] + Array("example".utf8) + [0x07]
    /// TLM with the temperature not measured (0x8000).
    static let eddystoneTLM: [UInt8] = [0x20, 0x00, 0x0B, 0xB8, 0x80, 0x00, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x04, 0xD2]
    static let eddystoneUID: [UInt8] = [0x00, 0xEC] + Array(0...9) + Array(0xA0...0xA5) + [0, 0]

    fileprivate static func randomAdvertisement(at time: Duration, using g: inout SplitMix64) -> Advertisement {
        var a = TextFormatTests.advertisement
        a.properties.addressType = [nil, "public", "random"].randomElement(using: &g)!
        a.properties.name = [nil, "", "blesim Keys", "say \"hi\"\\\n\t", "café \u{1}\u{85}", "😀 sensor"].randomElement(using: &g)!
        a.properties.rssi = [nil, -127, -61, 0, 20].randomElement(using: &g)!
        a.properties.txPower = [nil, -8, 0, 127].randomElement(using: &g)!
        a.properties.appearance = [nil, 0x03C1, 0x0000, 0xFFFF].randomElement(using: &g)!
        a.properties.uuids = [[], [BluetoothUUID("1812")!], [BluetoothUUID("180f")!, BluetoothUUID("0000feed-0000-1000-8000-00805f9b34fb")!,
                                                   BluetoothUUID("12345678-1234-5678-1234-56789abcdef0")!]].randomElement(using: &g)!
        a.properties.manufacturerData = [[:], [0x05F1: [1, 2]], [0xFFFF: [], 0x004C: [0x02, 0x15], 0x0006: Array(0...20)],
                                         [0x004C: Self.iBeacon]].randomElement(using: &g)!
        a.properties.serviceData = [[:], [BluetoothUUID("feed")!: [2, 0, 0x31]],
                         [BluetoothUUID("180f")!: [], BluetoothUUID("fe9f")!: [0xFF]]].randomElement(using: &g)!
        // The beacon formats `decoded` is written from (each decoded, and undecodable).
        a.properties.serviceData = (a.properties.serviceData ?? [:]).merging([[:], [:], [Self.bthome: Self.bthomeFrame], [Self.bthome: [0x40, 0x02, 0xC4]],
                                        [Self.eddystone: Self.eddystoneURL], [Self.eddystone: Self.eddystoneTLM],
                                        [Self.eddystone: Self.eddystoneUID, Self.bthome: Self.bthomeEvents]].randomElement(using: &g)!) { $1 }
        a.properties.connected = Bool.random(using: &g)
        a.receivedAt = time
        return a
    }
}
