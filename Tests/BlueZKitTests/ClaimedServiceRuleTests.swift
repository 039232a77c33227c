import BlueZKit
import Testing

/// The rule that tells bluetoothd's read-only claimed services from a device's own refusal
/// (BLEError+ClaimedServices.swift).
@Suite("NotAuthorized writes into claimed services")
struct ClaimedServiceRuleTests {
    static let address = BluetoothAddress("C0:FF:EE:00:00:0D")!
    static let setting = BluetoothUUID("5a1e0201-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!
    static let write = BLEOperation(.write, address: address, service: .batteryService, characteristic: setting)
    static let refusal = BLEError.notPermitted(write, dbusError: BlueZ.Error.notAuthorized, message: "Operation Not Authorized")

    @Test("a write into 0x180F refused NotAuthorized by bluetoothd 5.80 or later, or of unknown version, is service_read_only",
          arguments: [BlueZVersion(major: 5, minor: 80), BlueZVersion(major: 5, minor: 87), nil])
    func readOnly(_ version: BlueZVersion?) {
        let error = Self.refusal.explainingClaimedService(bluez: version)
        #expect(error == .serviceReadOnly(Self.write, dbusError: BlueZ.Error.notAuthorized, message: "Operation Not Authorized"))
        #expect(error.dbusError == BlueZ.Error.notAuthorized)
        #expect(error.operation == Self.write)
        #expect(error.transience == nil)
        #expect(error.description.contains("ExportClaimedServices = read-write"), "\(error)")
        #expect(!error.description.contains("blectl pair"), "\(error)")
    }

    @Test("left as the device's refusal: bluetoothd older than 5.80, a service no plugin claims, a read, NotPermitted")
    func notReadOnly() {
        #expect(Self.refusal.explainingClaimedService(bluez: BlueZVersion(major: 5, minor: 66)) == Self.refusal)
        let vendor = BLEOperation(.write, address: Self.address, service: BluetoothUUID("5a1e0100-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!,
                                  characteristic: Self.setting)
        let vendorRefusal = BLEError.notPermitted(vendor, dbusError: BlueZ.Error.notAuthorized, message: "Operation Not Authorized")
        #expect(vendorRefusal.explainingClaimedService(bluez: nil) == vendorRefusal)
        let read = BLEOperation(.read, address: Self.address, service: .batteryService, characteristic: Self.setting)
        let readRefusal = BLEError.notPermitted(read, dbusError: BlueZ.Error.notAuthorized, message: "Operation Not Authorized")
        #expect(readRefusal.explainingClaimedService(bluez: nil) == readRefusal)
        let notPaired = BLEError.notPermitted(Self.write, dbusError: BlueZ.Error.notPermitted, message: "Not paired")
        #expect(notPaired.explainingClaimedService(bluez: nil) == notPaired)
    }

    @Test("bluetoothd's version from its own Device ID modalias; none from another")
    func versionFromModalias() {
        #expect(BlueZVersion(modalias: "usb:v1D6Bp0246d0542") == BlueZVersion(major: 5, minor: 66))
        #expect(BlueZVersion(modalias: "usb:v1D6Bp0246d0552") == BlueZVersion(major: 5, minor: 82))
        #expect(BlueZVersion(modalias: "usb:v1d6bp0246d0557")?.description == "5.87")
        #expect(BlueZVersion(modalias: "usb:v046Dp4023d0006") == nil)
        #expect(BlueZVersion(modalias: "usb:v1D6Bp0246d05") == nil)
        #expect(BlueZVersion(major: 5, minor: 66) < BlueZVersion(major: 5, minor: 80))
    }
}
