import DBusKit

/// Observes a ``Session``: its bus traffic (``BusObserver``), what it makes of each signal,
/// and the operations it begins (``Session/open(address:timeout:observer:)``).
///
/// For a D-Bus trace (`blectl -v`) or a progress line: events, never text. Every method
/// runs on the connection's queue or on the task of the operation; each must be quick and
/// must not call into the session. A session without an observer reports nothing (one nil
/// check per message or operation). The methods have empty defaults: implement what you use.
public protocol SessionObserver: BusObserver {
    /// What the session made of `signal` (in bus order, after the signals before it; the
    /// ``BusEvent/signal(_:routed:)`` of the same message came first), at `time`.
    func session(received signal: Message, _ fate: SignalFate, at time: ContinuousClock.Instant)
    /// An operation began: a BlueZ call or a wait on BlueZ's objects for it (connect,
    /// service resolution, a read of a characteristic, the wait for a disconnection, the
    /// scan that looks for a device...). Several may begin for one step; the latest is the
    /// one under way.
    func session(began operation: BLEOperation)
}

extension SessionObserver {
    public func observe(_ event: BusEvent, at time: ContinuousClock.Instant) {}
    public func session(received signal: Message, _ fate: SignalFate, at time: ContinuousClock.Instant) {}
    public func session(began operation: BLEOperation) {}
}

/// What a ``Session`` made of a signal it received (``SessionObserver``).
///
/// Only signals from org.bluez's current unique owner count (and NameOwnerChanged only from
/// the bus daemon): any client on the bus may send signals, even straight to us.
public enum SignalFate: Sendable, Equatable {
    /// Acted on: folded into the object cache as an event (``SessionEvent``), or
    /// NameOwnerChanged of org.bluez followed (bluetoothd came or went).
    case applied
    /// From bluetoothd, but it changes nothing the session keeps: an object or interface it
    /// does not cache (org.bluez.Input1, a path it never saw), nothing new, or bluetoothd
    /// leaving once more after it has left.
    case unchanged
    /// Dropped: not sent by org.bluez's current owner (`owner`; nil while org.bluez has none).
    case notFromBlueZ(sender: String?, owner: String?)
    /// Dropped: a NameOwnerChanged not sent by the bus daemon (`sender`), or not about
    /// org.bluez.
    case notFromBusDaemon(sender: String?)
}

extension Session {
    /// Tells the observer, if any, that `operation` began.
    func began(_ operation: BLEOperation) {
        observer?.session(began: operation)
    }
}
