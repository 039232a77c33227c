import DBusKit

/// A stage of a BlueZ operation, named in errors: "timed out during connect on
/// C0:FF:EE:00:00:01", "timed out waiting for the response notification of characteristic
/// 5a1e0003-… on C0:FF:EE:00:00:02"; UUIDs as ``BluetoothUUID/named`` spells them.
public struct BLEOperation: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case bus, adapter, discovery, deviceLookup = "device_lookup", connect
        case serviceResolution = "service_resolution", serviceLookup = "service_lookup"
        case read, write, notificationSetup = "notification_setup", response, battery, disconnect
        case agent, pair, trust, unpair
        /// Registering an advertisement of this host's own, and advertising it.
        case advertise
        /// Registering a GATT application of this host's own, and serving it.
        case serve
        /// Receiving the notifications of a subscription, once it is set up.
        case notifications
    }

    public var kind: Kind
    public var address: BluetoothAddress?
    public var service: BluetoothUUID?
    public var characteristic: BluetoothUUID?
    /// The descriptor of `characteristic` concerned (a descriptor read), or nil.
    public var descriptor: BluetoothUUID?

    public init(_ kind: Kind, address: BluetoothAddress? = nil, service: BluetoothUUID? = nil, characteristic: BluetoothUUID? = nil,
                descriptor: BluetoothUUID? = nil) {
        self.kind = kind
        self.address = address
        self.service = service
        self.characteristic = characteristic
        self.descriptor = descriptor
    }

    public var description: String {
        var text: String
        switch kind {
        case .bus: text = "the connection to the system bus"
        case .adapter: text = "adapter set-up"
        case .discovery: text = "discovery"
        case .deviceLookup: text = "the search for the device"
        case .connect: text = "connect"
        case .serviceResolution: text = "service resolution"
        case .serviceLookup: text = "GATT service lookup"
        case .read: text = "read"
        case .write: text = "write"
        case .notificationSetup: text = "notification setup"
        case .response: text = "the wait for the response notification"
        case .battery: text = "battery lookup"
        case .disconnect: text = "disconnect"
        case .agent: text = "pairing agent registration"
        case .pair: text = "pairing"
        case .trust: text = "the write of Trusted"
        case .unpair: text = "unpairing"
        case .notifications: text = "notifications"
        case .advertise: text = "advertising"
        case .serve: text = "serving GATT"
        }
        return text + place
    }

    /// What the operation concerns, as a phrase to follow its name: ` of descriptor 2902
    /// (Client Characteristic Configuration) of characteristic 2a19 (Battery Level) in
    /// service 180f (Battery) on C0:FF:EE:00:00:01`; empty for nothing.
    public var place: String {
        var text = ""
        if let descriptor { text += " of descriptor \(descriptor.named)" }
        if let characteristic { text += " of characteristic \(characteristic.named)" }
        if let service { text += " in service \(service.named)" }
        if let address { text += " on \(address)" }
        return text
    }

    /// The sentence for running out of time in this operation: "timed out during connect
    /// on …", and for the stages that are waits, "timed out waiting for the response
    /// notification …" / "timed out waiting for notifications …" / "timed out waiting for
    /// the adapter to power on" / "timed out waiting for the link to go down …".
    var timedOutSentence: String {
        switch kind {
        case .response: "timed out waiting for the response notification" + place
        case .notifications: "timed out waiting for notifications" + place
        // The one wait of the adapter stage: PowerState "off-enabling" until the deadline.
        case .adapter: "timed out waiting for the adapter to power on" + place
        // Disconnect is answered once the link is down, after BlueZ's disconnect timer; the
        // same wait comes before connecting anew to a link found on its way down (the
        // command before's), and the sentence must not suggest a Disconnect of this one.
        case .disconnect: "timed out waiting for the link to go down" + place
        default: "timed out during \(self)"
        }
    }
}

/// Why Bluetooth cannot be used at all.
public enum Unavailability: Sendable, Equatable {
    /// The system bus cannot be reached: libdbus's message.
    case busUnreachable(String)
    /// The connection to the system bus was lost (or closed) while we were working.
    case busLost
    /// Nobody owns `org.bluez`: bluetoothd is not running.
    case bluezNotRunning
    /// bluetoothd left the bus while we were working.
    case bluezLeft
    /// No adapter (or not the one asked for: its name).
    case noAdapter(String?)
    /// The adapter went away (its object was removed) while we were working: its name.
    case adapterRemoved(String)
    /// The adapter is powered off (its name).
    case poweredOff(String)
    /// The adapter is powered off and blocked by rfkill (Adapter1.PowerState
    /// `"off-blocked"`, BlueZ >= 5.64): its name.
    case blocked(String)
    /// BlueZ answered `org.bluez.Error.NotReady` (the adapter is not powered or not ready).
    case notReady
}

/// Errors of the BlueZ layer. Timeout, cancellation (`CancellationError`, not a case here)
/// and disconnection are different outcomes.
public enum BLEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Bluetooth is unavailable (no bus, no bluetoothd, no adapter, powered off): why, the
    /// stage it was met in (``BLEOperation/Kind/bus`` while opening the session,
    /// ``BLEOperation/Kind/adapter`` while choosing the adapter, else the operation under
    /// way; nil when unknown), and the D-Bus error name behind it, if there was one
    /// (`org.freedesktop.DBus.Error.NoReply`, libdbus's `org.freedesktop.DBus.Error.NoServer`).
    case unavailable(Unavailability, during: BLEOperation? = nil, dbusError: String? = nil)
    /// The D-Bus policy denied us (`org.freedesktop.DBus.Error.AccessDenied`): its message,
    /// and the stage that was refused (nil when unknown).
    case permissionDenied(String, during: BLEOperation? = nil)
    /// The device is not known to BlueZ and was not found by scanning before the deadline.
    case deviceNotFound(BluetoothAddress)
    /// The device lacks what `operation` needs (a GATT service, a characteristic, a
    /// battery), or BlueZ answered `org.bluez.Error.NotSupported`: what is missing.
    case notSupported(BLEOperation, String)
    /// The link dropped (Connected=false or the device object removed) during `operation`;
    /// `reason`: why, as bluetoothd said it (Device1.Disconnected, 5.83 and later), nil when
    /// it did not.
    case disconnected(BLEOperation, reason: DisconnectReason? = nil)
    /// Another operation or client holds what `operation` needs: BlueZ answered
    /// `org.bluez.Error.InProgress`, or `org.bluez.Error.Failed` with a kernel "busy" errno
    /// text (``busyErrnoMessages``). The D-Bus error name and message as sent.
    case busy(BLEOperation, dbusError: String, message: String)
    /// The operation did not finish before its deadline.
    case timedOut(BLEOperation)
    /// BlueZ reported a failure: the D-Bus error name and message as sent.
    case failed(BLEOperation, dbusError: String, message: String)
    /// BlueZ answered with something this library does not understand.
    case protocolError(BLEOperation, String)
    /// The device refused the operation for want of pairing, encryption or authorization:
    /// BlueZ answered `org.bluez.Error.NotPermitted` or `org.bluez.Error.NotAuthorized`
    /// (bluez/src/gatt-client.c maps ATT "insufficient authentication/encryption" to
    /// NotPermitted "Not paired"). The D-Bus error name and message as sent.
    case notPermitted(BLEOperation, dbusError: String, message: String)
    /// bluetoothd refused a write into a GATT service one of its own plugins claims (the
    /// battery, deviceinfo and gap plugins: 0x180F, 0x180A, 0x1800, ...), which it exports
    /// read-only from 5.80 on (main.conf `[GATT] ExportClaimedServices`, default
    /// `read-only`): `org.bluez.Error.NotAuthorized`, and nothing reached the device
    /// (BLEError+ClaimedServices.swift). The D-Bus error name and message as sent.
    case serviceReadOnly(BLEOperation, dbusError: String, message: String)
    /// Pairing failed: `org.bluez.Error.AuthenticationFailed`, `AuthenticationRejected`,
    /// `AuthenticationCanceled` or `AuthenticationTimeout` (bluez/doc/org.bluez.Device.rst
    /// Pair). The D-Bus error name and message as sent.
    case authenticationFailed(BLEOperation, dbusError: String, message: String)
    /// The device sent a value that breaks its protocol (an empty Battery Level, a level
    /// above 100 %, a vendor answer too short): what was wrong.
    case deviceProtocolError(BLEOperation, String)
    /// A write's outcome is unknown: the attribute's object left while the write was pending
    /// (the device changed its GATT database), so BlueZ never answered, and blectl did not
    /// write again (the device may have taken it). What happened.
    case outcomeUnknown(BLEOperation, String)
    /// An advertisement refused before anything was sent to bluetoothd: a field that does
    /// not fit 31 bytes, a value bluetoothd would refuse, no free advertising instance
    /// (``LEAdvertisement/legacyPayload(adapterDiscoverable:adapterName:)``); stage
    /// ``BLEOperation/Kind/advertise``.
    case advertisementRejected(LEAdvertisement.Rejection)
    /// bluetoothd ended the advertisement itself (LEAdvertisement1.Release): its Timeout,
    /// the adapter going away, bluetoothd stopping, another tool. Nothing is advertised any more.
    case released(BLEOperation)

    public var description: String {
        switch self {
        case .unavailable(let why, let operation, _): Self.describe(why, during: operation)
        case .permissionDenied(let message, _): "permission denied by the D-Bus policy: \(message) (is this user allowed to talk to org.bluez? see /etc/dbus-1/system.d/bluetooth.conf; try the 'bluetooth' group)"
        case .deviceNotFound(let address): "device \(address) not found"
        case .notSupported(_, let what): "not supported by the device: \(what)"
        case .disconnected(let operation, nil): "disconnected during \(operation)"
        case .disconnected(let operation, let reason?): "disconnected during \(operation) (bluetoothd: \(reason))"
        case .busy(let operation, _, let message): "busy: \(operation): \(message)"
        case .timedOut(let operation): operation.timedOutSentence
        case .failed(let operation, let name, let message) where operation.kind == .connect && Device.isBREDRFailure(self):
            "\(operation) failed: \(name): \(message) (BlueZ connected this dual-mode device over BR/EDR, not LE, even after "
                + "an LE-only scan: its LE advertisements say it does BR/EDR too; where bluetoothd offers Device1.PreferredBearer "
                + "(BlueZ 5.80 and later, only with --experimental), setting it to \"le\" makes BlueZ connect over LE, "
                + "and also puts the device on bluetoothd's auto-connect list)"
        case .failed(let operation, let name, let message): "\(operation) failed: \(name): \(message)"
        case .protocolError(let operation, let what): "unexpected answer from BlueZ during \(operation): \(what)"
        case .notPermitted(let operation, let name, let message):
            "\(operation) not permitted: \(name): \(message) (the device wants pairing or encryption: try 'blectl pair \(operation.address?.description ?? "ADDRESS")')"
        case .serviceReadOnly(let operation, let name, let message):
            "\(operation) refused by bluetoothd: it keeps service \(operation.service?.named ?? "?") read-only for its own plugin "
                + "(\(name): \(message); nothing was sent to the device; '[GATT] ExportClaimedServices = read-write' in "
                + "/etc/bluetooth/main.conf makes it writable, after a restart of bluetoothd)"
        case .authenticationFailed(let operation, let name, let message): "\(operation) failed: \(name): \(message)"
        case .deviceProtocolError(let operation, let what): "the device broke its protocol during \(operation): \(what)"
        case .outcomeUnknown(let operation, let what): "outcome of the \(operation) unknown: \(what)"
        case .advertisementRejected(let rejection): "advertisement refused before it was sent: \(rejection)"
        case .released(let operation): "bluetoothd released the advertisement (LEAdvertisement1.Release) during \(operation): nothing is advertised any more"
        }
    }

    /// The message of ``unavailable(_:during:dbusError:)``: the reason alone when it was met
    /// while opening the bus or choosing the adapter ("Bluetooth adapter hci0 is powered
    /// off"), else what happened and during what ("Bluetooth adapter hci0 was powered off
    /// during connect on C0:FF:EE:00:00:01").
    static func describe(_ why: Unavailability, during operation: BLEOperation?) -> String {
        guard let operation, operation.kind != .bus, operation.kind != .adapter else {
            return switch why {
            case .busUnreachable(let message): "cannot connect to the system bus: \(message)"
            case .busLost: "the connection to the system bus was lost"
            case .bluezNotRunning: "bluetoothd is not running (org.bluez is not on the system bus)"
            case .bluezLeft: "bluetoothd left the system bus"
            case .noAdapter(nil): "no Bluetooth adapter"
            case .noAdapter(let name?): "Bluetooth adapter \(name) not found"
            case .adapterRemoved(let name): "Bluetooth adapter \(name) was removed"
            case .poweredOff(let name): "Bluetooth adapter \(name) is powered off"
            case .blocked(let name): "Bluetooth adapter \(name) is blocked by rfkill (try 'rfkill unblock bluetooth')"
            case .notReady: "the Bluetooth adapter is not ready (org.bluez.Error.NotReady: powered off?)"
            }
        }
        return switch why {
        case .busUnreachable(let message): "cannot connect to the system bus during \(operation): \(message)"
        case .busLost: "the connection to the system bus was lost during \(operation)"
        case .bluezNotRunning: "bluetoothd is not running (org.bluez is not on the system bus) during \(operation)"
        case .bluezLeft: "bluetoothd left the system bus during \(operation)"
        case .noAdapter(nil): "no Bluetooth adapter during \(operation)"
        case .noAdapter(let name?), .adapterRemoved(let name): "Bluetooth adapter \(name) was removed during \(operation)"
        case .poweredOff(let name): "Bluetooth adapter \(name) was powered off during \(operation)"
        case .blocked(let name): "Bluetooth adapter \(name) was blocked by rfkill during \(operation) (try 'rfkill unblock bluetooth')"
        case .notReady: "the Bluetooth adapter was not ready during \(operation) (org.bluez.Error.NotReady: powered off?)"
        }
    }

    /// The error with `operation` as its stage when it has none yet (``unavailable(_:during:dbusError:)``
    /// and ``permissionDenied(_:during:)`` met while `operation` was under way).
    public func during(_ operation: BLEOperation) -> BLEError {
        switch self {
        case .unavailable(let why, nil, let name): .unavailable(why, during: operation, dbusError: name)
        case .permissionDenied(let message, nil): .permissionDenied(message, during: operation)
        default: self
        }
    }

    /// The operation the error concerns, when there is one.
    public var operation: BLEOperation? {
        switch self {
        case .unavailable(_, let op?, _), .permissionDenied(_, let op?): op
        case .disconnected(let op, _), .busy(let op, _, _), .timedOut(let op), .failed(let op, _, _), .protocolError(let op, _),
             .notSupported(let op, _), .notPermitted(let op, _, _), .serviceReadOnly(let op, _, _), .authenticationFailed(let op, _, _),
             .deviceProtocolError(let op, _),
             .outcomeUnknown(let op, _), .released(let op): op
        case .advertisementRejected: BLEOperation(.advertise)
        default: nil
        }
    }

    /// The D-Bus error name behind the error, when there is one.
    public var dbusError: String? {
        switch self {
        case .failed(_, let name, _): name
        case .busy(_, let name, _): name
        case .notPermitted(_, let name, _), .serviceReadOnly(_, let name, _), .authenticationFailed(_, let name, _): name
        case .unavailable(_, _, let name?): name
        case .unavailable(.notReady, _, nil): BlueZ.Error.notReady
        case .permissionDenied: DBusErrorName.accessDenied
        default: nil
        }
    }

    /// `strerror` texts of the errnos that mean "someone else holds it", which bluetoothd
    /// passes on as `org.bluez.Error.Failed` (btd_error_failed(msg, strerror(-err))): two
    /// clients connecting one device at once get "Operation already in progress" (EALREADY).
    public static let busyErrnoMessages: Set<String> = [
        "Operation already in progress",  // EALREADY
        "Operation now in progress",      // EINPROGRESS
        "Device or resource busy",        // EBUSY
    ]

    /// Maps a D-Bus layer error met during `operation` to a BlueZ layer error.
    /// Non-D-Bus errors (`CancellationError`, a `BLEError`) are returned unchanged.
    package static func from(_ error: any Error, during operation: BLEOperation) -> any Error {
        if let error = error as? BLEError { return error.during(operation) }
        guard let bus = error as? BusError else { return error }
        switch bus {
        case .timedOut: return BLEError.timedOut(operation)
        case .disconnected: return BLEError.unavailable(.busLost, during: operation)
        case .connectionFailed(let name, let message): return BLEError.unavailable(.busUnreachable(message), during: operation, dbusError: name)
        case .invalidArgument(let what): return BLEError.protocolError(operation, what)
        case .outOfMemory: return BLEError.protocolError(operation, "out of memory")
        case .errorReply(let name, let message):
            switch name {
            case DBusErrorName.accessDenied: return BLEError.permissionDenied(message, during: operation)
            case DBusErrorName.serviceUnknown, DBusErrorName.nameHasNoOwner:
                return BLEError.unavailable(.bluezNotRunning, during: operation, dbusError: name)
            case DBusErrorName.noReply, DBusErrorName.disconnected: return BLEError.unavailable(.bluezLeft, during: operation, dbusError: name)
            case BlueZ.Error.inProgress: return BLEError.busy(operation, dbusError: name, message: message)
            case BlueZ.Error.failed where busyErrnoMessages.contains(message):
                return BLEError.busy(operation, dbusError: name, message: message)
            case BlueZ.Error.notReady: return BLEError.unavailable(.notReady, during: operation, dbusError: name)
            case BlueZ.Error.notConnected where operation.kind == .connect,
                 BlueZ.Error.failed where operation.kind == .connect && message == "Not connected":
                // A Connect that fails never had a link up: not a disconnection.
                return BLEError.failed(operation, dbusError: name, message: message)
            case BlueZ.Error.notConnected: return BLEError.disconnected(operation)
            case BlueZ.Error.notSupported: return BLEError.notSupported(operation, "\(operation): \(message)")
            case DBusErrorName.unknownObject, BlueZ.Error.doesNotExist:
                if let address = operation.address, operation.kind == .connect { return BLEError.deviceNotFound(address) }
                return BLEError.failed(operation, dbusError: name, message: message)
            case BlueZ.Error.failed where message == "Not connected":
                return BLEError.disconnected(operation)
            case BlueZ.Error.notPermitted where message == BlueZ.NotPermittedMessage.notifyAcquired
                || message == BlueZ.NotPermittedMessage.writeAcquired:
                // Another client holds the acquired socket (bluetoothd allows one): busy until
                // it lets go, whatever this client asks; pairing would not help.
                return BLEError.busy(operation, dbusError: name, message: "\(message) (another client holds it; bluetoothd allows one at a time)")
            case BlueZ.Error.notPermitted where message == BlueZ.NotPermittedMessage.readNotPermitted
                || message == BlueZ.NotPermittedMessage.writeNotPermitted:
                // ATT Read/Write Not Permitted: the attribute never allows it; pairing would not help.
                return BLEError.notSupported(operation, "\(operation): the device refused it (\(name): \(message))")
            case BlueZ.Error.notPermitted, BlueZ.Error.notAuthorized:
                return BLEError.notPermitted(operation, dbusError: name, message: message)
            case BlueZ.Error.authenticationFailed, BlueZ.Error.authenticationRejected, BlueZ.Error.authenticationCanceled,
                 BlueZ.Error.authenticationTimeout:
                return BLEError.authenticationFailed(operation, dbusError: name, message: message)
            default: return BLEError.failed(operation, dbusError: name, message: message)
            }
        }
    }
}
