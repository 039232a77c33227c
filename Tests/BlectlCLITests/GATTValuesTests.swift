import BlueZKit
import Testing
@testable import BlectlCLI

/// `connect --values`: which read failures end the command and which stay in the tree, and
/// the sentence the tree's value_error holds.
@Suite struct GATTValuesTests {
    static let probe = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let read = BLEOperation(.read, address: probe, service: .batteryService, characteristic: .batteryLevel)

    @Test("the device's or BlueZ's answer about one attribute stays in the tree; a lost link, the deadline, Bluetooth gone end the command")
    func whatEndsTheCommand() {
        let attributeAlone: [BLEError] = [
            .notSupported(Self.read, "read: the device refused it (org.bluez.Error.NotPermitted: Read not permitted)"),
            .notPermitted(Self.read, dbusError: "org.bluez.Error.NotPermitted", message: "Not paired"),
            .failed(Self.read, dbusError: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e"),
            .busy(Self.read, dbusError: "org.bluez.Error.InProgress", message: "In Progress"),
            .protocolError(Self.read, "ReadValue did not return bytes"),
        ]
        let wholeCommand: [BLEError] = [
            .disconnected(Self.read), .timedOut(Self.read), .unavailable(.bluezLeft, during: Self.read),
            .unavailable(.poweredOff("hci0"), during: Self.read), .permissionDenied("denied", during: Self.read),
        ]
        #expect(attributeAlone.filter(GATTValues.failsTheCommand) == [])
        #expect(wholeCommand.filter { !GATTValues.failsTheCommand($0) } == [])
    }

    @Test("value_error is the error's sentence without the attribute's place")
    func sentenceWithoutPlace() {
        #expect(GATTValues.sentence(.notPermitted(Self.read, dbusError: "org.bluez.Error.NotPermitted", message: "Not paired"))
            == "read not permitted: org.bluez.Error.NotPermitted: Not paired (the device wants pairing or encryption: try 'blectl pair C0:FF:EE:00:00:01')")
        #expect(GATTValues.sentence(.failed(Self.read, dbusError: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e"))
            == "read failed: org.bluez.Error.Failed: Operation failed with ATT error: 0x0e")
        let descriptor = BLEOperation(.read, address: Self.probe, service: .batteryService, characteristic: .batteryLevel,
                                      descriptor: BluetoothUUID("2901")!)
        #expect(GATTValues.sentence(.notSupported(descriptor, "\(descriptor): the device refused it (org.bluez.Error.NotPermitted: Read not permitted)"))
            == "not supported by the device: read: the device refused it (org.bluez.Error.NotPermitted: Read not permitted)")
    }

    @Test("JSON members: value in hex, or null with value_error; none for an attribute not read")
    func members() {
        #expect(JSONValue.object(GATTValues.members(.value([0x57, 0x0a]))).serialized() == #"{"value":"570a"}"#)
        #expect(JSONValue.object(GATTValues.members(.value([]))).serialized() == #"{"value":""}"#)
        #expect(JSONValue.object(GATTValues.members(.failed("read failed: x"))).serialized() == #"{"value":null,"value_error":"read failed: x"}"#)
        #expect(GATTValues.members(nil).isEmpty)
    }
}
