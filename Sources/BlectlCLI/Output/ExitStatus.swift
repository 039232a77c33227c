import BlueZKit
import DBusKit

/// blectl's exit statuses: distinct per kind of outcome, documented in man/blectl.1 and
/// `blectl --help` (sysexits.h values where one fits).
enum ExitStatus: Int32, Sendable, CaseIterable {
    case ok = 0
    /// BlueZ reported a failure (`org.bluez.Error.Failed` and others).
    case bluezFailed = 1
    case deviceNotFound = 2
    /// The device lacks the service, characteristic or battery asked for.
    case notSupported = 3
    /// A link that was up dropped during the operation (a Connect that never brought it up
    /// is a failure, 1, or not found, 2).
    case disconnected = 4
    /// An operation already in progress (`org.bluez.Error.InProgress`), adapter busy.
    case busy = 5
    /// A run over several devices in which some failed, not all with the same status (when
    /// they agree, the run ends with theirs); each device's line gives its own.
    case devicesFailedDifferently = 6
    /// EX_USAGE
    case usage = 64
    /// EX_DATAERR: a `serve` profile that cannot be served (its line and member named);
    /// nothing was registered.
    case invalidProfile = 65
    /// EX_UNAVAILABLE: no bus, no bluetoothd, no adapter, adapter powered off or blocked by
    /// rfkill, at start or while the command runs.
    case unavailable = 69
    /// EX_SOFTWARE: an answer blectl does not understand.
    case `internal` = 70
    /// EX_IOERR: writing standard output failed (ENOSPC, EIO; not a reader that went away).
    case ioError = 74
    /// EX_NOPERM: the D-Bus policy denied access, the device wants pairing or encryption first,
    /// or bluetoothd keeps the service read-only.
    case permissionDenied = 77
    /// As timeout(1).
    case timedOut = 124

    /// The `code` of the JSON error object.
    var code: String {
        switch self {
        case .ok: "ok"
        case .bluezFailed: "bluez_failed"
        case .deviceNotFound: "device_not_found"
        case .notSupported: "not_supported"
        case .disconnected: "disconnected"
        case .busy: "busy"
        case .devicesFailedDifferently: "devices_failed"
        case .usage: "usage"
        case .invalidProfile: "invalid_profile"
        case .unavailable: "unavailable"
        case .internal: "internal"
        case .ioError: "io_error"
        case .permissionDenied: "permission_denied"
        case .timedOut: "timed_out"
        }
    }

    /// One line for help and docs.
    var summary: String {
        switch self {
        case .ok: "Success."
        case .bluezFailed: "BlueZ reported a failure."
        case .deviceNotFound: "Device not found."
        case .notSupported: "Not supported by the device."
        case .disconnected: "Disconnected."
        case .busy: "Busy: an operation already in progress, adapter busy."
        case .devicesFailedDifferently: "Several devices failed, with different statuses."
        case .usage: "Usage error."
        case .invalidProfile: "A serve profile that cannot be served."
        case .unavailable: "Bluetooth unavailable: no bluetoothd, no adapter, powered off, rfkill."
        case .internal: "Internal error."
        case .ioError: "Writing standard output failed (a full disk, an I/O error)."
        case .permissionDenied: "Permission denied by the D-Bus policy or bluetoothd, or pairing wanted."
        case .timedOut: "Timed out."
        }
    }

    /// The status for an error thrown by the BlueZ layer.
    init(for error: any Error) {
        if let error = error as? any CommandError {
            self = error.status
            return
        }
        guard let error = error as? BLEError else {
            self = .internal
            return
        }
        switch error {
        case .unavailable: self = .unavailable
        case .permissionDenied: self = .permissionDenied
        case .deviceNotFound: self = .deviceNotFound
        case .notSupported: self = .notSupported
        case .disconnected: self = .disconnected
        case .busy: self = .busy
        case .timedOut: self = .timedOut
        case .failed: self = .bluezFailed
        case .protocolError: self = .internal
        case .notPermitted, .serviceReadOnly, .authenticationFailed: self = .permissionDenied
        case .deviceProtocolError, .outcomeUnknown, .released: self = .bluezFailed
        case .advertisementRejected(let rejection): self = rejection.kind == .noFreeInstance ? .busy : .usage
        }
    }

    /// The `code` of the JSON error object for `error`: the status's code, or a finer one
    /// where one status covers several kinds (77: `permission_denied`, `not_permitted`,
    /// `service_read_only`, `authentication_failed`; 1: `bluez_failed`, `connection_aborted`, `device_protocol_error`,
    /// `outcome_unknown`, `released`, `advertisement_refused`; 64: `usage`, `does_not_fit`).
    static func code(for error: any Error) -> String {
        guard let error = error as? BLEError else { return ExitStatus(for: error).code }
        return switch error {
        case .notPermitted: "not_permitted"
        case .serviceReadOnly: "service_read_only"
        case .authenticationFailed: "authentication_failed"
        case .failed where error.isConnectionAbort: "connection_aborted"
        case .deviceProtocolError: "device_protocol_error"
        case .outcomeUnknown: "outcome_unknown"
        case .advertisementRejected(let rejection) where rejection.kind == .doesNotFit: "does_not_fit"
        case .released: "released"
        case .failed(let operation, _, _) where operation.kind == .advertise: "advertisement_refused"
        default: ExitStatus(for: error).code
        }
    }

    /// Every `code` of the JSON error object: the statuses' codes (``ok`` aside) and the finer
    /// ones of ``code(for:)``.
    static let allCodes: [String] = allCases.filter { $0 != .ok }.map(\.code)
        + ["not_permitted", "service_read_only", "authentication_failed", "connection_aborted", "device_protocol_error", "outcome_unknown",
           "does_not_fit", "released", "advertisement_refused"]
}

/// An error of blectl's own (not BlueZ's) with the exit status it ends with, such as a
/// characteristic UUID that names several characteristics (64).
protocol CommandError: Error, CustomStringConvertible {
    var status: ExitStatus { get }
    /// The operation, device, service and characteristic the error concerns, for the JSON
    /// error object; nil (the default) for none.
    var operation: BLEOperation? { get }
}

extension CommandError {
    var operation: BLEOperation? { nil }
}

