// Error messages: one form for UUIDs (the JSON form, then the SIG name where known:
// `180f (Battery)`), and sentences that read well for every operation.

import Testing
@testable import BlueZKit

@Suite("error messages: UUIDs in one form, sentences that read")
struct MessageFormTests {
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let vendor = BluetoothUUID("5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b")!

    @Test("BluetoothUUID.named: the short form, then the SIG name where there is one")
    func named() {
        #expect(BluetoothUUID.batteryService.named == "180f (Battery)")
        #expect(BluetoothUUID("2A19")!.named == "2a19 (Battery Level)")
        #expect(BluetoothUUID("2902")!.named == "2902 (Client Characteristic Configuration)")
        #expect(Self.vendor.named == "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b")
        #expect(BluetoothUUID("fff0")!.named == "fff0")
    }

    @Test("an operation names its descriptor, characteristic and service as BluetoothUUID.named does")
    func operationPlace() {
        let read = BLEOperation(.read, address: Self.address, service: .batteryService, characteristic: BluetoothUUID("2a19")!,
                                descriptor: BluetoothUUID("2902")!)
        #expect(read.description == "read of descriptor 2902 (Client Characteristic Configuration) of characteristic 2a19 (Battery Level) "
                + "in service 180f (Battery) on C0:FF:EE:00:00:01")
        let response = BLEOperation(.response, address: Self.address, service: Self.vendor, characteristic: Self.vendor)
        #expect(BLEError.timedOut(response).description
                == "timed out waiting for the response notification of characteristic \(Self.vendor) in service \(Self.vendor) on C0:FF:EE:00:00:01")
    }

    /// Every stage in the three sentences it appears in.
    @Test("every stage reads well after 'timed out', 'disconnected during' and before 'failed'", arguments: [
        (BLEOperation.Kind.bus, "timed out during the connection to the system bus", "the connection to the system bus failed"),
        (.adapter, "timed out waiting for the adapter to power on", "adapter set-up failed"),
        (.discovery, "timed out during discovery", "discovery failed"),
        (.deviceLookup, "timed out during the search for the device", "the search for the device failed"),
        (.connect, "timed out during connect", "connect failed"),
        (.serviceResolution, "timed out during service resolution", "service resolution failed"),
        (.serviceLookup, "timed out during GATT service lookup", "GATT service lookup failed"),
        (.read, "timed out during read", "read failed"),
        (.write, "timed out during write", "write failed"),
        (.notificationSetup, "timed out during notification setup", "notification setup failed"),
        (.response, "timed out waiting for the response notification", "the wait for the response notification failed"),
        (.battery, "timed out during battery lookup", "battery lookup failed"),
        (.disconnect, "timed out waiting for the link to go down", "disconnect failed"),
        (.agent, "timed out during pairing agent registration", "pairing agent registration failed"),
        (.pair, "timed out during pairing", "pairing failed"),
        (.trust, "timed out during the write of Trusted", "the write of Trusted failed"),
        (.unpair, "timed out during unpairing", "unpairing failed"),
        (.notifications, "timed out waiting for notifications", "notifications failed"),
    ])
    func sentences(_ kind: BLEOperation.Kind, _ timedOut: String, _ failed: String) {
        let operation = BLEOperation(kind)
        #expect(BLEError.timedOut(operation).description == timedOut)
        #expect(BLEError.failed(operation, dbusError: "org.bluez.Error.Failed", message: "x").description
                == "\(failed): org.bluez.Error.Failed: x")
        #expect(!BLEError.disconnected(operation).description.contains("during waiting"))
    }

    /// No message shows a UUID the SIG names without its name: the bare 16-bit form followed
    /// by anything but " (".
    @Test("no error message shows a named UUID bare")
    func noBareUUIDs() {
        let operation = BLEOperation(.read, address: Self.address, service: .batteryService, characteristic: BluetoothUUID("2a19")!)
        let errors: [BLEError] = [
            .timedOut(operation), .disconnected(operation), .failed(operation, dbusError: "org.bluez.Error.Failed", message: "m"),
            .busy(operation, dbusError: "org.bluez.Error.InProgress", message: "m"), .protocolError(operation, "m"),
            .notPermitted(operation, dbusError: "org.bluez.Error.NotPermitted", message: "Not paired"),
            .notSupported(operation, "\(operation): m"), .deviceProtocolError(operation, "m"),
        ]
        for error in errors {
            let text = error.description
            for bare in ["180f", "2a19"] {
                var rest = Substring(text)
                while let range = rest.range(of: bare) {
                    #expect(rest[range.upperBound...].hasPrefix(" ("), "bare \(bare) in: \(text)")
                    rest = rest[range.upperBound...]
                }
            }
        }
    }
}
