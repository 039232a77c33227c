import DBusKit

extension Session {
    /// A session being opened without a task, begun before anyone awaits it: a program starts
    /// one as soon as it knows it will talk to BlueZ, and its own set-up (argument checks,
    /// signal handlers, its first task) overlaps the connect, the bus daemon's `Hello`, the
    /// match rules and GetManagedObjects. ``Session/open(_:timeout:)`` then takes the session.
    ///
    /// The work runs on the connection's own Dispatch queue: the match rules, GetNameOwner
    /// and GetManagedObjects go on the wire as soon as `Hello` is answered, as
    /// ``Session/open(address:timeout:observer:)`` sends them (which is this, awaited at once).
    /// Nothing is sent to bluetoothd that changes its state. An opening given up (the taker's
    /// timeout or cancellation) or dropped before anyone took its session closes its
    /// connection.
    public final class Opening: Sendable {
        /// The D-Bus address connected to.
        public let address: String
        /// Told of the session's traffic from `Hello` on (``SessionObserver``).
        let observer: (any SessionObserver)?

        /// What a taker is given: the session, loaded, or why there is none.
        typealias Outcome = Result<Session, any Error>

        private struct State {
            /// The session once the connection is registered, while it loads.
            var session: Session?
            /// The outcome, until it is taken.
            var outcome: Outcome?
            /// Who waits for the outcome, until it comes.
            var taker: (@Sendable (Outcome) -> Void)?
            /// Whether a taker has claimed the session (it is given once).
            var taken = false
            /// Given up: whatever comes next is closed.
            var abandoned = false
        }

        private let state = Lock(State())

        /// Starts connecting to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` honoured) or to the
        /// bus at `address`, then registering (`Hello`) and loading; returns at once.
        /// - Parameters:
        ///   - address: a D-Bus address (`unix:path=...`); nil: the system bus.
        ///   - observer: as for ``Session/open(address:timeout:observer:)``: told of every
        ///     message after `Hello`; nil (the default) for none.
        public init(address: String? = nil, observer: (any SessionObserver)? = nil) {
            self.address = address ?? BusConnection.systemBusAddress
            self.observer = observer
            BusConnection.startConnecting(to: self.address) { [self] result in registered(result) }
        }

        deinit {
            // Nobody took it: the session it was loading, or the one it had ready, is closed,
            // and a load that ends later closes its own (its closure holds the state, not the
            // opening). While it connects, the connect holds the opening.
            abandon()
        }

        /// Whether the outcome has come and waits to be taken (tests).
        var isSettled: Bool { state.withLock { $0.outcome != nil } }

        /// Claims the session for one taker: false when it was claimed already.
        func claim() -> Bool {
            state.withLock { state in
                defer { state.taken = true }
                return !state.taken
            }
        }

        /// `Hello` answered (or the connect failed): makes the session and starts loading it,
        /// on the connection's queue, unless the opening was given up meanwhile.
        private func registered(_ result: Result<BusConnection.Opened, any Error>) {
            let opened: BusConnection.Opened
            switch result {
            case .failure(let error):
                Self.finish(.failure(error), in: state)
                return
            case .success(let registered):
                opened = registered
            }
            let began: Bool = state.withLock { state in
                guard !state.abandoned else { return false }
                // The calls go on the wire before the connection makes its read thread.
                _ = opened.connection(address: address, observer: observer) { connection in
                    let session = Session(connection: connection, observer: self.observer)
                    state.session = session
                    // The load's closure holds the state, not the opening: an opening dropped
                    // while its load is pending is given up (deinit), and the connection's
                    // reply handlers must not keep it alive. Not `weak self` either: a weak
                    // reference's side table is reachable only through a shifted pointer,
                    // which LeakSanitizer reports as leaked when the opening lives to exit.
                    let shared = self.state
                    session.beginLoad { loaded in
                        if case .failure = loaded { session.close() }
                        Self.finish(loaded.map { session }, in: shared)
                    }
                }
                return true
            }
            if !began { opened.abandon() }
        }

        /// The outcome: to the taker if there is one, else kept (closed if given up).
        private static func finish(_ outcome: Outcome, in state: Lock<State>) {
            let (taker, unwanted): ((@Sendable (Outcome) -> Void)?, Session?) = state.withLock { state in
                state.session = nil
                if let taker = state.taker {
                    state.taker = nil
                    return (taker, nil)
                }
                if state.abandoned { return (nil, try? outcome.get()) }
                state.outcome = outcome
                return (nil, nil)
            }
            unwanted?.close()
            taker?(outcome)
        }

        /// Hands the outcome to `taker`, now if it is there, else when it comes (on the
        /// connection's queue). Once, after ``claim()``.
        func take(_ taker: @escaping @Sendable (Outcome) -> Void) {
            let ready: Outcome? = state.withLock { state in
                guard let outcome = state.outcome else {
                    state.taker = taker
                    return nil
                }
                state.outcome = nil
                return outcome
            }
            if let ready { taker(ready) }
        }

        /// Gives the session up: a connection made or being made is closed, what is pending
        /// fails, and a taker still waiting is not called.
        func abandon() {
            let (loading, ready): (Session?, Session?) = state.withLock { state in
                state.abandoned = true
                state.taker = nil
                defer { state.outcome = nil }
                return (state.session, try? state.outcome?.get())
            }
            loading?.close()
            ready?.close()
        }
    }
}
