// BLEError.transience: which failures may pass on another try (bleak-retry-connector's
// classes, BlueZ's reasons from src/error.h and the errno texts of src/device.c), and which
// cannot, as BLEError.from maps BlueZ's answers.

import BlueZKit
import DBusKit
import Testing

@Suite("BLEError.transience")
struct TransienceTests {
    static let address = BluetoothAddress("C0:FF:EE:00:00:01")!
    static let connect = BLEOperation(.connect, address: address)
    static let read = BLEOperation(.read, address: address, service: BluetoothUUID("180f"), characteristic: BluetoothUUID("2a19"))

    static func map(_ name: String, _ message: String, during operation: BLEOperation = connect) -> BLEError? {
        BLEError.from(BusError.errorReply(name: name, message: message), during: operation) as? BLEError
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var message: String
        var transience: BLEError.Transience?
        var abort = false
        var testDescription: String { "\(name) \(message)" }
    }

    /// BlueZ's answers to Connect, as BLEError.from maps them, and their class.
    @Test("Connect failures by BlueZ's reason", arguments: [
        Row(name: BlueZ.Error.failed, message: "le-connection-abort-by-local", transience: .transient, abort: true),
        Row(name: BlueZ.Error.failed, message: "le-connection-abort-by-remote", transience: .transient, abort: true),
        Row(name: BlueZ.Error.failed, message: "br-connection-aborted-by-local", transience: .transient, abort: true),
        Row(name: BlueZ.Error.failed, message: "br-connection-aborted-by-remote", transience: .transient, abort: true),
        Row(name: BlueZ.Error.failed, message: "br-connection-canceled", transience: .transient, abort: true),
        Row(name: BlueZ.Error.failed, message: "Software caused connection abort", transience: .transient, abort: true),
        Row(name: BlueZ.Error.failed, message: "Connection reset by peer", transience: .transient, abort: true),
        Row(name: BlueZ.Error.failed, message: "le-connection-timeout", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "br-connection-page-timeout", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "br-connection-timeout", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "Connection timed out", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "Host is down", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "le-connection-busy", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "le-connection-gatt-browsing", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "le-connection-concurrent-connection-limit", transience: .outOfSlots),
        Row(name: BlueZ.Error.failed, message: "br-connection-concurrent-connection-limit", transience: .outOfSlots),
        Row(name: BlueZ.Error.failed, message: "Too many links", transience: .outOfSlots),
        // Busy: another client or operation holds the device or the adapter.
        Row(name: BlueZ.Error.inProgress, message: "In Progress", transience: .transient),
        Row(name: BlueZ.Error.inProgress, message: "br-connection-busy", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "Operation already in progress", transience: .transient),
        Row(name: BlueZ.Error.failed, message: "Device or resource busy", transience: .transient),
        // Not transient: what the controller, the keys or the request make fail every time.
        Row(name: BlueZ.Error.failed, message: "le-connection-not-supported", transience: nil),
        Row(name: BlueZ.Error.failed, message: "le-connection-invalid-arguments", transience: nil),
        Row(name: BlueZ.Error.failed, message: "le-connection-key-missing", transience: nil),
        Row(name: BlueZ.Error.failed, message: "le-connection-refused", transience: nil),
        Row(name: BlueZ.Error.failed, message: "le-connection-link-layer-protocol-error", transience: nil),
        Row(name: BlueZ.Error.failed, message: "le-connection-unknown", transience: nil),
        Row(name: BlueZ.Error.failed, message: "Not connected", transience: nil),
        Row(name: BlueZ.Error.failed, message: "Operation failed", transience: nil),
        Row(name: "org.bluez.Error.NotAvailable", message: "br-connection-profile-unavailable", transience: nil),
        Row(name: "org.bluez.Error.BREDR.ProfileUnavailable", message: "No more profiles to connect to", transience: nil),
        Row(name: BlueZ.Error.notSupported, message: "Operation is not supported", transience: nil),
        Row(name: BlueZ.Error.notReady, message: "Resource Not Ready", transience: nil),
        Row(name: DBusErrorName.accessDenied, message: "Rejected send message", transience: nil),
        // The reason must be BlueZ's exactly: a look-alike is not it.
        Row(name: BlueZ.Error.failed, message: "le-connection-abort-by-remote.", transience: nil),
    ])
    func connectFailure(_ row: Row) throws {
        let error = try #require(Self.map(row.name, row.message))
        #expect(error.transience == row.transience, "\(error)")
        #expect(error.isTransient == (row.transience != nil))
        #expect(error.isConnectionAbort == row.abort)
    }

    @Test("GATT answers: the device's refusals and ATT errors are not transient; a link that dropped is")
    func gattAnswers() throws {
        #expect(Self.map(BlueZ.Error.notPermitted, "Not paired", during: Self.read)?.transience == nil)
        #expect(Self.map(BlueZ.Error.notPermitted, "Read not permitted", during: Self.read)?.transience == nil)
        #expect(Self.map(BlueZ.Error.notAuthorized, "Operation Not Authorized", during: Self.read)?.transience == nil)
        #expect(Self.map(BlueZ.Error.failed, "Operation failed with ATT error: 0x0e", during: Self.read)?.transience == nil)
        #expect(Self.map(BlueZ.Error.invalidArguments, "Invalid offset", during: Self.read)?.transience == nil)
        #expect(Self.map(BlueZ.Error.failed, "Not connected", during: Self.read) == .disconnected(Self.read))
        #expect(Self.map(BlueZ.Error.failed, "Not connected", during: Self.read)?.transience == .transient)
        #expect(Self.map(BlueZ.Error.inProgress, "In Progress", during: Self.read)?.transience == .transient)
    }

    @Test("the other cases: device missing is its own class; timeouts, Bluetooth unavailable and protocol breaches are not transient")
    func otherCases() {
        #expect(BLEError.deviceNotFound(Self.address).transience == .deviceMissing)
        #expect(BLEError.disconnected(Self.read).transience == .transient)
        #expect(BLEError.timedOut(Self.connect).transience == nil)
        #expect(BLEError.unavailable(.poweredOff("hci0"), during: Self.connect).transience == nil)
        #expect(BLEError.unavailable(.bluezLeft, during: Self.connect).transience == nil)
        #expect(BLEError.permissionDenied("denied").transience == nil)
        #expect(BLEError.notSupported(Self.read, "no characteristic").transience == nil)
        #expect(BLEError.protocolError(Self.read, "bad signature").transience == nil)
        #expect(BLEError.deviceProtocolError(BLEOperation(.battery, address: Self.address), "level 101").transience == nil)
        #expect(BLEError.outcomeUnknown(BLEOperation(.write, address: Self.address), "gone").transience == nil)
        #expect(BLEError.authenticationFailed(BLEOperation(.pair, address: Self.address), dbusError: BlueZ.Error.authenticationCanceled,
                                              message: "Authentication Canceled").transience == nil)
    }

    @Test("every abort is transient; every transient message is BlueZ's or an errno text")
    func tables() {
        for message in BLEError.connectionAbortMessages {
            #expect(BLEError.transientFailureMessages[message] == .transient, "\(message)")
        }
        #expect(BLEError.transientFailureMessages.count == 18)
        #expect(BLEError.transientFailureMessages.filter { $0.value == .outOfSlots }.keys.sorted()
                == ["Too many links", "br-connection-concurrent-connection-limit", "le-connection-concurrent-connection-limit"])
    }
}
