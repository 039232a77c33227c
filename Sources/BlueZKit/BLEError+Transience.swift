/// Which failures may pass if the operation is simply tried again.
///
/// The classes are bleak-retry-connector's (`TRANSIENT_ERRORS`, `OUT_OF_SLOTS_ERRORS`,
/// `DEVICE_MISSING_ERRORS`, in `bleak_retry_connector/__init__.py`); the reasons are BlueZ's:
/// the `org.bluez.Error.Failed` messages bluez/src/error.c makes from a kernel errno for a
/// Connect (`btd_error_le_errno`, `btd_error_bredr_errno`: the `le-connection-*` and
/// `br-connection-*` reasons of bluez/src/error.h), the `strerror` texts bluez/src/device.c
/// passes on as they are (`btd_error_failed(msg, strerror(-err))`), and
/// `org.bluez.Error.InProgress`.
extension BLEError {
    /// Why a failure may pass when the operation is tried again: its class in
    /// bleak-retry-connector's terms.
    public enum Transience: Sendable, Equatable {
        /// The radio or the controller cut the attempt short, or something else held what
        /// the operation needed for a moment: an aborted or timed-out connection
        /// (`le-connection-abort-by-local`, `le-connection-abort-by-remote`,
        /// `br-connection-canceled`, "Software caused connection abort", ...), a link that
        /// dropped, `org.bluez.Error.InProgress` (another operation or client busy with the
        /// device or the adapter). Worth another try after a short pause.
        case transient
        /// The controller has no free link for another connection
        /// (`le-connection-concurrent-connection-limit`, "Too many links": EMLINK). Worth
        /// another try once a link has gone down; BlueZ keeps an idle link up for its 2 s
        /// disconnect timer.
        case outOfSlots
        /// The device was not heard, or BlueZ removed its object while it was being
        /// connected (bleak-retry-connector's device-missing class: an adapter out of slots,
        /// a device that sleeps between advertisements, one at the edge of range). It may be
        /// heard on another try.
        case deviceMissing
    }

    /// The error's class when it may pass on another try; nil when trying again cannot help
    /// as things are: Bluetooth unavailable, the D-Bus policy, what the device lacks or
    /// refuses (`org.bluez.Error.NotSupported`, `NotPermitted`, `NotAuthorized`, a service
    /// bluetoothd keeps read-only, a failed
    /// pairing), a value or an answer that breaks a protocol, a write whose outcome is unknown,
    /// a failure BlueZ gives no transient reason for, and a timeout (the caller's own limit ran
    /// out: as bleak-retry-connector, which leaves `asyncio.TimeoutError` to the caller so that
    /// a limit it set is not multiplied by the attempts).
    ///
    /// Whether a retry is safe is another matter: a write that failed transiently may still
    /// have reached the device (``BLEError/disconnected(_:)`` during ``BLEOperation/Kind/write``).
    public var transience: Transience? {
        switch self {
        case .busy: .transient
        case .disconnected: .transient
        case .deviceNotFound: .deviceMissing
        case .failed(_, _, let message): Self.transientFailureMessages[message]
        case .unavailable, .permissionDenied, .notSupported, .timedOut, .protocolError, .notPermitted, .serviceReadOnly, .authenticationFailed,
             .deviceProtocolError, .outcomeUnknown, .advertisementRejected, .released:
            nil
        }
    }

    /// Whether the failure may pass on another try: ``transience`` is not nil.
    public var isTransient: Bool { transience != nil }

    /// Whether BlueZ reported the connection attempt (or the link) aborted: one of
    /// ``connectionAbortMessages`` in an `org.bluez.Error.Failed`.
    public var isConnectionAbort: Bool {
        guard case .failed(_, _, let message) = self else { return false }
        return Self.connectionAbortMessages.contains(message)
    }

    /// The messages of `org.bluez.Error.Failed` that say the connection attempt or the link
    /// was aborted (bluez/src/error.h, error.c: ECONNABORTED is `*-abort-by-local`,
    /// ECONNRESET `*-abort-by-remote`; a Connect cancelled by Disconnect or by the link going
    /// down is `br-connection-canceled`, bluez/src/device.c; the errno texts where device.c
    /// passes `strerror` on).
    public static let connectionAbortMessages: Set<String> = [
        "le-connection-abort-by-local",     // ECONNABORTED (also what a controller out of links gives)
        "le-connection-abort-by-remote",    // ECONNRESET
        "br-connection-aborted-by-local",   // ECONNABORTED
        "br-connection-aborted-by-remote",  // ECONNRESET
        "br-connection-canceled",           // the attempt cancelled (device.c)
        "Software caused connection abort", // strerror(ECONNABORTED)
        "Connection reset by peer",         // strerror(ECONNRESET)
    ]

    /// The messages of `org.bluez.Error.Failed` that are transient, by class: the
    /// ``connectionAbortMessages``; a connection that timed out in the kernel
    /// (`le-connection-timeout`, `br-connection-page-timeout`, `br-connection-timeout`:
    /// ETIMEDOUT, EHOSTDOWN); a kernel busy with another connection (`le-connection-busy`,
    /// `br-connection-busy`: EBUSY); GATT discovery that failed as the link came up
    /// (`le-connection-gatt-browsing`); and no free link in the controller
    /// (`*-concurrent-connection-limit`, "Too many links": EMLINK). Every other reason
    /// (`le-connection-not-supported`, `-invalid-arguments`, `-key-missing`, `-refused`,
    /// `-link-layer-protocol-error`, `-unknown`, ...) is not.
    public static let transientFailureMessages: [String: Transience] = {
        var table = Dictionary(uniqueKeysWithValues: connectionAbortMessages.map { ($0, Transience.transient) })
        for message in [
            "le-connection-timeout", "br-connection-page-timeout", "br-connection-timeout",
            "Connection timed out", "Host is down",
            "le-connection-busy", "br-connection-busy",
            "le-connection-gatt-browsing",
        ] {
            table[message] = .transient
        }
        for message in ["le-connection-concurrent-connection-limit", "br-connection-concurrent-connection-limit", "Too many links"] {
            table[message] = .outOfSlots
        }
        return table
    }()
}
