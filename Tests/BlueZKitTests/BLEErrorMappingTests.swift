// BLEError.from: every D-Bus error BlueZ or the bus sends maps to the documented BlueZ-layer
// error, and the JSON fields (operation, dbusError) come along.

import BlueZKit
import DBusKit
import Testing

@Suite("BLEError.from")
struct BLEErrorMappingTests {
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let connect = BLEOperation(.connect, address: address)

    static func map(_ name: String, _ message: String, during operation: BLEOperation = connect) -> BLEError? {
        BLEError.from(BusError.errorReply(name: name, message: message), during: operation) as? BLEError
    }

    @Test("kernel 'busy' errno texts in org.bluez.Error.Failed are busy, with the D-Bus name kept",
          arguments: ["Operation already in progress", "Operation now in progress", "Device or resource busy"])
    func failedWithBusyErrnoIsBusy(message: String) {
        let error = Self.map(BlueZ.Error.failed, message)
        #expect(error == .busy(Self.connect, dbusError: BlueZ.Error.failed, message: message))
        #expect(error?.dbusError == BlueZ.Error.failed)
        #expect(error?.operation == Self.connect)
    }

    @Test("InProgress is busy with its own D-Bus name")
    func inProgressIsBusy() {
        let error = Self.map(BlueZ.Error.inProgress, "Operation already in progress")
        #expect(error == .busy(Self.connect, dbusError: BlueZ.Error.inProgress, message: "Operation already in progress"))
        #expect(error?.dbusError == BlueZ.Error.inProgress)
    }

    @Test("other Failed messages stay failures with name and message",
          arguments: ["le-connection-abort-by-local", "Operation already in progress.", "operation already in progress", ""])
    func otherFailedIsFailed(message: String) {
        #expect(Self.map(BlueZ.Error.failed, message) == .failed(Self.connect, dbusError: BlueZ.Error.failed, message: message))
    }

    @Test("Failed 'Not connected' and NotConnected are a disconnection")
    func notConnectedIsDisconnected() {
        let read = BLEOperation(.read, address: Self.address, service: BluetoothUUID("180f"), characteristic: BluetoothUUID("2a19"))
        #expect(Self.map(BlueZ.Error.failed, "Not connected", during: read) == .disconnected(read))
        #expect(Self.map(BlueZ.Error.notConnected, "", during: read) == .disconnected(read))
    }

    @Test("NotReady is unavailable and keeps its D-Bus name")
    func notReady() {
        let error = Self.map(BlueZ.Error.notReady, "Resource Not Ready")
        let connect = BLEOperation(.connect, address: Self.address)
        #expect(error == .unavailable(.notReady, during: connect, dbusError: BlueZ.Error.notReady))
        #expect(error?.dbusError == BlueZ.Error.notReady)
        #expect(error?.operation == connect)
    }

    @Test("NotSupported names the operation")
    func notSupported() {
        let write = BLEOperation(.write, address: Self.address, service: BluetoothUUID("180f"), characteristic: BluetoothUUID("2a19"))
        let error = Self.map(BlueZ.Error.notSupported, "Operation is not supported", during: write)
        #expect(error?.operation == write)
        if case .notSupported(let op, let what)? = error {
            #expect(op == write)
            #expect(what == "write of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01: Operation is not supported")
        } else {
            Issue.record("expected notSupported, got \(String(describing: error))")
        }
    }

    @Test("bus-level names: access denied, bluetoothd absent or gone, unknown device on connect")
    func busLevelNames() {
        let connect = BLEOperation(.connect, address: Self.address)
        #expect(Self.map(DBusErrorName.accessDenied, "denied") == .permissionDenied("denied", during: connect))
        #expect(Self.map(DBusErrorName.serviceUnknown, "") == .unavailable(.bluezNotRunning, during: connect, dbusError: DBusErrorName.serviceUnknown))
        #expect(Self.map(DBusErrorName.noReply, "") == .unavailable(.bluezLeft, during: connect, dbusError: DBusErrorName.noReply))
        #expect(Self.map(DBusErrorName.noReply, "")?.description == "bluetoothd left the system bus during connect on C0:FF:EE:00:00:01")
        #expect(Self.map(DBusErrorName.unknownObject, "") == .deviceNotFound(Self.address))
        #expect(Self.map(BlueZ.Error.doesNotExist, "Does Not Exist") == .deviceNotFound(Self.address))
        let read = BLEOperation(.read, address: Self.address)
        #expect(Self.map(DBusErrorName.unknownObject, "x", during: read) == .failed(read, dbusError: DBusErrorName.unknownObject, message: "x"))
    }

    static let read = BLEOperation(.read, address: address, service: .batteryService, characteristic: .batteryLevel)

    @Test("NotPermitted and NotAuthorized (pairing or encryption wanted) are not_permitted, name kept",
          arguments: [BlueZ.Error.notPermitted, BlueZ.Error.notAuthorized])
    func notPermitted(name: String) {
        let error = Self.map(name, "Not paired", during: Self.read)
        #expect(error == .notPermitted(Self.read, dbusError: name, message: "Not paired"))
        #expect(error?.dbusError == name)
        #expect(error?.operation == Self.read)
        #expect(error?.description.contains("blectl pair C0:FF:EE:00:00:01") == true)
    }

    /// gatt-client.c answers ATT Read/Write Not Permitted with NotPermitted too, but pairing
    /// would not help: the attribute is not readable (writable) at all.
    @Test("NotPermitted 'Read/Write not permitted' is not_supported, not a pairing matter",
          arguments: ["Read not permitted", "Write not permitted"])
    func attributeNotPermitted(message: String) {
        let error = Self.map(BlueZ.Error.notPermitted, message, during: Self.read)
        #expect(error == .notSupported(Self.read, "read of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01: the device refused it (org.bluez.Error.NotPermitted: \(message))"))
        #expect(error?.description.contains("blectl pair") == false)
    }

    /// Another client holds the acquired socket: busy (retryable) until it lets go; pairing
    /// would not help, whatever this client asks (AcquireNotify, StartNotify, WriteValue).
    @Test("NotPermitted 'Notify/Write acquired' is busy, not a pairing matter", arguments: ["Notify acquired", "Write acquired"])
    func acquiredByAnotherClient(message: String) {
        let setUp = BLEOperation(.notificationSetup, address: Self.address, service: .batteryService, characteristic: .batteryLevel)
        let error = Self.map(BlueZ.Error.notPermitted, message, during: setUp)
        #expect(error == .busy(setUp, dbusError: BlueZ.Error.notPermitted,
                               message: "\(message) (another client holds it; bluetoothd allows one at a time)"))
        #expect(error?.description.contains("blectl pair") == false)
        #expect(error?.transience != nil)
    }

    @Test("a descriptor is named in the operation's description")
    func descriptorOperation() {
        let op = BLEOperation(.read, address: Self.address, service: .batteryService, characteristic: .batteryLevel,
                              descriptor: BluetoothUUID("2902")!)
        #expect(op.description == "read of descriptor 2902 (Client Characteristic Configuration) of characteristic 2a19 (Battery Level) in service 180f (Battery) on C0:FF:EE:00:00:01")
    }

    @Test("Authentication* answers to Pair are authentication failures, name kept", arguments: [
        BlueZ.Error.authenticationFailed, BlueZ.Error.authenticationRejected, BlueZ.Error.authenticationCanceled, BlueZ.Error.authenticationTimeout,
    ])
    func authenticationFailed(name: String) {
        let pair = BLEOperation(.connect, address: Self.address)
        #expect(Self.map(name, "x", during: pair) == .authenticationFailed(pair, dbusError: name, message: "x"))
    }
}
