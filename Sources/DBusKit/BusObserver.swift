/// What a ``BusConnection`` tells its ``BusObserver``: each message it sends or receives, as
/// it sends or receives it.
///
/// For tracing (`blectl -v`) and the like: events, never text; rendering them is the
/// observer's business. A connection without an observer reports nothing and measures
/// nothing (one nil check per message).
public enum BusEvent: Sendable {
    /// The connection is up: registered on the bus at `address` (after `Hello`), with the
    /// unique name `uniqueName`. The first event.
    case connected(address: String, uniqueName: String)
    /// A method call was written to the outgoing queue. `serial` pairs it with its
    /// ``reply(_:latency:abandoned:)``; `expectsReply` is false for a call sent with
    /// ``BusConnection/sendNoReply(_:)``.
    case call(MethodCall, serial: UInt32, expectsReply: Bool)
    /// A method call that was not sent: the connection was closed, or the call could not be
    /// encoded (``BusError/invalidArgument(_:)``) or passed (a Unix fd on a bus that takes none).
    case callNotSent(MethodCall, BusError)
    /// The reply to one of our calls (``Message/replySerial`` is the call's serial): a method
    /// return or an error (``Message/kind``). `latency`: from the call's sending to this reply.
    /// `abandoned`: the caller had given up on it (its timeout passed, or it was cancelled),
    /// so the reply is dropped.
    case reply(Message, latency: Duration, abandoned: Bool)
    /// A signal received. `routed`: whether a handler's rules match it (it is then handed
    /// to that handler); false when none does (a unicast signal sent straight to us).
    case signal(Message, routed: Bool)
    /// A signal this connection emitted (``BusConnection/emit(_:)``).
    case emitted(Signal)
    /// A method call received for an object we export (``BusConnection/export(_:_:)``), or
    /// for a path nobody exports (answered `UnknownObject`).
    case incomingCall(Message)
    /// Our answer to an incoming call (`call` is what ``incomingCall(_:)`` reported).
    case answered(Message, MethodReply)
    /// The connection ended: closed by us, or lost (the daemon hung up).
    case closed
}

/// Observes a ``BusConnection``'s traffic (``BusConnection/connect(to:observer:)``).
///
/// Called on the connection's queue, in the order the messages were sent and received
/// (a signal before a reply that arrived after it), with the time the connection saw the
/// message. Must be quick and must not wait on the connection: the next message waits
/// for it.
public protocol BusObserver: Sendable {
    /// One message sent or received, at `time`.
    func observe(_ event: BusEvent, at time: ContinuousClock.Instant)
}
