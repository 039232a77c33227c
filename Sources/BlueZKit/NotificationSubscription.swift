// The values of a notification subscription that may outlive its link
// (Device+NotificationSubscription.swift): the reconnection policy, the events, the values.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// When a subscription whose link dropped connects again
/// (``Device/withNotificationSubscription(timeout:reconnect:method:disconnectTimeout:characteristic:_:)``):
/// attempts spaced by a doubling delay, from `initialDelay` to at most `maximumDelay`, none
/// started after `deadline`.
public struct ReconnectPolicy: Sendable, Equatable {
    /// The delay before the first attempt after a link loss.
    public var initialDelay: Duration
    /// The longest delay between two attempts.
    public var maximumDelay: Duration
    /// No attempt starts after this instant, and each one must be done by then.
    public var deadline: ContinuousClock.Instant

    public init(initialDelay: Duration, maximumDelay: Duration, deadline: ContinuousClock.Instant) {
        self.initialDelay = initialDelay
        self.maximumDelay = max(initialDelay, maximumDelay)
        self.deadline = deadline
    }

    /// The delay before attempt `attempt` (1 for the first after a link loss):
    /// `initialDelay` doubled for each earlier attempt of the same loss, at most `maximumDelay`
    /// (0.2 s, 0.4 s, 0.8 s, 1.6 s, 2 s, 2 s, … for 0.2 s and 2 s).
    public func delay(beforeAttempt attempt: Int) -> Duration {
        var delay = initialDelay
        var doublings = max(0, attempt - 1)
        while doublings > 0 && delay < maximumDelay {
            delay = delay * 2
            doublings -= 1
        }
        return min(delay, maximumDelay)
    }
}

/// One notified value, as a subscription delivers it.
public struct NotifiedValue: Sendable, Equatable {
    /// The value bytes, as the notification's own signal carried them.
    public var bytes: [UInt8]
    /// The link it came on: 1 for the link the subscription started on, one more for each
    /// time the device's `Connected` became true again since.
    public var connection: Int
    /// The wall-clock time (CLOCK_REALTIME) the session took the value from its signal, as
    /// the duration since the Unix epoch.
    public var receivedAt: Duration

    public init(bytes: [UInt8], connection: Int, receivedAt: Duration) {
        self.bytes = bytes
        self.connection = connection
        self.receivedAt = receivedAt
    }
}

/// What a notification subscription reports, in order.
public enum SubscriptionEvent: Sendable, Equatable {
    /// A notified value. Values come in bus order, each once.
    case value(NotifiedValue)
    /// The link dropped (`Connected` false or the device object removed): the number of the
    /// link that ended. Without a ``ReconnectPolicy`` the stream then ends with
    /// ``BLEError/disconnected(_:)``.
    case linkLost(connection: Int)
    /// A reconnection attempt (`attempt`, from 1 for each loss) failed with `error`; the next
    /// one starts after `retryIn`.
    case reconnectFailed(attempt: Int, error: BLEError, retryIn: Duration)
    /// The subscription is in place again on link `connection` (its StartNotify answered).
    /// Values of that link may come before this event: bluetoothd re-enables a session it
    /// kept by itself.
    case restored(connection: Int)
    /// AcquireNotify was asked for and could not be had on a new link (bluetoothd answered
    /// InProgress: another client has a StartNotify session on the characteristic): from now
    /// on the subscription is a StartNotify session, whose values include what clients read.
    /// Comes before the ``restored(connection:)`` of that link. (When the set-up already has
    /// to, ``NotificationSubscription/fallback`` says so instead.)
    case fellBackToStartNotify(AcquireNotifyFallback)
}

/// Why a subscription that asked for AcquireNotify uses StartNotify
/// (``NotificationSubscription/fallback``): its values then include what any client reads.
public enum AcquireNotifyFallback: Sendable, Equatable, CustomStringConvertible {
    /// The characteristic can indicate but not notify (bluetoothd 5.66 grants AcquireNotify
    /// only with the `notify` flag).
    case indicateOnly
    /// The bus connection cannot pass Unix file descriptors (a `tcp:` bus): AcquireNotify's
    /// socket could not reach us.
    case noDescriptorPassing
    /// Another client has a StartNotify session on the characteristic: bluetoothd answered
    /// AcquireNotify with InProgress.
    case otherClientSession

    public var description: String {
        switch self {
        case .indicateOnly: "the characteristic indicates but does not notify"
        case .noDescriptorPassing: "the bus cannot pass file descriptors"
        case .otherClientSession: "another client has a StartNotify session on it"
        }
    }
}

/// A notification subscription, as its body sees it.
public struct NotificationSubscription: Sendable {
    /// The characteristic as found on the first connection (after a reconnection the path
    /// may differ; the UUIDs do not).
    public let characteristic: GATTCharacteristic
    /// How notifications were turned on: AcquireNotify when asked for and granted (only
    /// notified values), else StartNotify.
    public let method: NotifyMethod
    /// Why StartNotify is used although AcquireNotify was asked for; nil otherwise.
    public let fallback: AcquireNotifyFallback?
    /// Values, link losses and reconnections, in order (see
    /// ``Device/withNotificationSubscription(timeout:reconnect:method:disconnectTimeout:characteristic:_:)``
    /// and ``SubscriptionEvents``).
    public let events: SubscriptionEvents
}

/// CLOCK_REALTIME as the duration since the Unix epoch.
func wallClockNow() -> Duration {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
}
