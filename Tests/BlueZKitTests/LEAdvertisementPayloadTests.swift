// The legacy payload an advertisement makes, against layouts computed by hand from
// bluetoothd 5.66 (src/advertising.c, src/shared/ad.c) and Linux (net/bluetooth/eir.c):
// each field's AD type and size in on-air order, the first field past 31 bytes named, and
// the values bluetoothd refuses. The LEAdvertisement1 properties as exported.

import DBusKit
import Testing
@testable import BlueZKit

@Suite struct LEAdvertisementPayloadTests {
    typealias Ad = LEAdvertisement
    static let vendorUUID = BluetoothUUID("5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!

    /// (property, entry, AD type, size, packet) of each field.
    static func layout(_ payload: Ad.LegacyPayload) -> [String] {
        payload.fields.map { "\($0.description) 0x\(String($0.adType, radix: 16)) \($0.size) \($0.packet == .advertisingData ? "adv" : "scan")" }
    }

    static func rejection(_ body: () throws(BLEError) -> Ad.LegacyPayload) -> Ad.Rejection? {
        do throws(BLEError) {
            _ = try body()
            return nil
        } catch {
            guard case .advertisementRejected(let rejection) = error else { return nil }
            return rejection
        }
    }

    @Test("nothing set: an empty peripheral advertisement; the kernel's Flags only while the adapter is discoverable")
    func empty() throws {
        let quiet = try Ad().legacyPayload(adapterDiscoverable: false)
        #expect(quiet.fields.isEmpty && quiet.advertisingDataSize == 0 && quiet.scanResponseSize == 0)
        let discoverable = try Ad().legacyPayload(adapterDiscoverable: true)
        #expect(Self.layout(discoverable) == ["Flags 0x1 3 adv"])
        #expect(discoverable.advertisingDataSize == 3)
        // A broadcast advertisement never gets them (get_adv_flags: connectable only).
        #expect(try Ad(type: .broadcast).legacyPayload(adapterDiscoverable: true).advertisingDataSize == 0)
    }

    @Test("every field, in bt_ad_generate's order, then the kernel's TX Power; the name in the scan response")
    func everyField() throws {
        // 03 03 0f18 | 05 ff ffff 0102 | 04 16 0f18 64 | 03 19 c103 | 02 0a 00 = 4+6+5+4+3 = 22;
        // scan response 07 09 "blectl" = 8.
        let ad = Ad(localName: "blectl", serviceUUIDs: [.batteryService],
                    manufacturerData: [.init(company: 0xFFFF, data: [1, 2])], serviceData: [.init(uuid: .batteryService, data: [0x64])],
                    includes: [.txPower], appearance: 0x03C1)
        let payload = try ad.legacyPayload(adapterDiscoverable: false)
        #expect(Self.layout(payload) == [
            "ServiceUUIDs 16-bit 0x3 4 adv", "ManufacturerData 0xffff 0xff 6 adv", "ServiceData 180f 0x16 5 adv",
            "Appearance 0x19 4 adv", "Includes tx-power 0xa 3 adv", "LocalName 0x9 8 scan",
        ])
        #expect(payload.advertisingDataSize == 22 && payload.scanResponseSize == 8)
    }

    @Test("UUIDs grouped by size (16-bit, then 128-bit), the Flags of Discoverable after the data")
    func uuidsAndDiscoverable() throws {
        // 05 03 0f18 0a18 (6) | 11 07 <16 bytes> (18) | 02 01 06 (3) = 27.
        let ad = Ad(serviceUUIDs: [.batteryService, Self.vendorUUID, .deviceInformation], discoverable: true)
        let payload = try ad.legacyPayload(adapterDiscoverable: true)
        #expect(Self.layout(payload) == ["ServiceUUIDs 16-bit 0x3 6 adv", "ServiceUUIDs 128-bit 0x7 18 adv", "Discoverable 0x1 3 adv"])
        #expect(payload.advertisingDataSize == 27)
        // 128-bit service data: 2 + 16 + data.
        let data = try Ad(serviceData: [.init(uuid: Self.vendorUUID, data: [1, 2, 3])]).legacyPayload(adapterDiscoverable: false)
        #expect(Self.layout(data) == ["ServiceData \(Self.vendorUUID) 0x21 21 adv"])
    }

    @Test("31 bytes fit; one more is refused, naming the field that crossed")
    func limit() throws {
        let full = Ad(manufacturerData: [.init(company: 0x004C, data: Array(repeating: 0xAA, count: 27))])
        #expect(try full.legacyPayload(adapterDiscoverable: false).advertisingDataSize == 31)
        // The adapter discoverable: its Flags come first (3), the manufacturer data no longer fits.
        let flagged = Self.rejection { () throws(BLEError) in try full.legacyPayload(adapterDiscoverable: true) }
        #expect(flagged == Ad.Rejection(.doesNotFit, property: "ManufacturerData", entry: "0x004c",
                                        reason: "it takes 31 bytes, and the advertising data would take 34 of 31"))
        // TX Power goes last: it is the field that crosses.
        let txPower = Ad(manufacturerData: [.init(company: 0x004C, data: Array(repeating: 0, count: 25))], includes: [.txPower])
        let crossed = Self.rejection { () throws(BLEError) in try txPower.legacyPayload(adapterDiscoverable: false) }
        #expect(crossed?.property == "Includes" && crossed?.entry == "tx-power" && crossed?.kind == .doesNotFit, "\(String(describing: crossed))")
        #expect(crossed?.reason == "it takes 3 bytes, and the advertising data would take 32 of 31")
        // Two 128-bit UUIDs: 2 + 32.
        let uuids = Self.rejection { () throws(BLEError) in
            try Ad(serviceUUIDs: [Self.vendorUUID, BluetoothUUID("5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!]).legacyPayload(adapterDiscoverable: false)
        }
        #expect(uuids == Ad.Rejection(.doesNotFit, property: "ServiceUUIDs", entry: "128-bit",
                                      reason: "it takes 34 bytes, and the advertising data would take 34 of 31"))
    }

    @Test("a name of 29 bytes fills the scan response; 30 would be shortened by bluetoothd, and is refused")
    func names() throws {
        let longest = String(repeating: "n", count: 29)
        #expect(try Ad(localName: longest).legacyPayload(adapterDiscoverable: false).scanResponseSize == 31)
        let tooLong = Self.rejection { () throws(BLEError) in try Ad(localName: longest + "é").legacyPayload(adapterDiscoverable: false) }
        #expect(tooLong?.kind == .doesNotFit && tooLong?.property == "LocalName")
        // The adapter's name (Includes local-name) is shortened to fit instead: Shortened Local Name, 31 bytes.
        let included = try Ad(includes: [.localName]).legacyPayload(adapterDiscoverable: false, adapterName: String(repeating: "h", count: 40))
        #expect(Self.layout(included) == ["Includes local-name 0x8 31 scan"])
        let short = try Ad(includes: [.localName]).legacyPayload(adapterDiscoverable: false, adapterName: "blesim-host")
        #expect(Self.layout(short) == ["Includes local-name 0x9 13 scan"])
    }

    @Test("what bluetoothd 5.66 refuses to parse is refused before anything is sent")
    func invalid() {
        let cases: [(Ad, String, String?)] = [
            (Ad(type: .broadcast, discoverable: true), "Discoverable", nil),
            (Ad(localName: "x", includes: [.localName]), "LocalName", nil),
            (Ad(includes: [.appearance], appearance: 0x00C1), "Appearance", nil),
            (Ad(manufacturerData: [.init(company: 1, data: [])]), "ManufacturerData", "0x0001"),
            (Ad(manufacturerData: [.init(company: 1, data: [1]), .init(company: 1, data: [2])]), "ManufacturerData", "0x0001"),
            (Ad(serviceData: [.init(uuid: .batteryService, data: [1]), .init(uuid: .batteryService, data: [2])]), "ServiceData", "180f"),
        ]
        for (ad, property, entry) in cases {
            let rejection = Self.rejection { () throws(BLEError) in try ad.legacyPayload(adapterDiscoverable: false) }
            #expect(rejection?.kind == .invalid && rejection?.property == property && rejection?.entry == entry, "\(ad): \(String(describing: rejection))")
        }
    }

    @Test("the LEAdvertisement1 properties: only those set, with BlueZ's types, UUIDs in their 128-bit form")
    func properties() {
        let ad = Ad(serviceUUIDs: [.batteryService], manufacturerData: [.init(company: 0x004C, data: [2, 0x15])],
                             serviceData: [.init(uuid: .batteryService, data: [0x64])], includes: [.localName, .txPower],
                             discoverable: true, timeout: 60)
        #expect(ad.properties.map(\.name) == ["Type", "ServiceUUIDs", "ManufacturerData", "ServiceData", "Includes", "Discoverable", "Timeout"])
        #expect(ad.properties.map(\.value.signature) == ["s", "as", "a{qv}", "a{sv}", "as", "b", "q"])
        #expect(ad.properties[1].value == .stringArray(["0000180f-0000-1000-8000-00805f9b34fb"]))
        #expect(ad.properties[4].value == .stringArray(["tx-power", "local-name"]))
        #expect(ad.properties[2].value == .dictionary(keySignature: "q", valueSignature: "v",
                                                               [.init(.uint16(0x004C), .variant(.bytes([2, 0x15])))]))
        #expect(Ad().properties.map(\.name) == ["Type"])
        #expect(Ad().properties[0].value == .string("peripheral"))
    }
}
