internal import CDBus

/// Routes one connection's received signals to the handlers registered for them
/// (``BusConnection/addSignalHandler(matching:_:)``).
///
/// Each signal is matched against every route's rules as libdbus dispatches it, decoded once
/// when some route takes it, and kept in that route's batch; ``deliverBatches()`` then hands
/// each batch to its handler, in registration order (once per dispatch pass, and before any
/// reply that arrived after the signals). Confined to the connection's queue.
final class SignalRouter {
    /// Routes in registration order: handlers of one batch run in that order.
    private var routes: [(id: UInt64, route: SignalRoute)] = []

    /// Signal handlers registered.
    var count: Int { routes.count }

    /// Adds a route: signals matching any of `rules` go to `handler`, in batches.
    func add(id: UInt64, rules: [MatchRule], handler: @escaping @Sendable ([Message]) -> Void) {
        routes.append((id, SignalRoute(rules: rules, handler: handler)))
    }

    func remove(id: UInt64) {
        routes.removeAll { $0.id == id }
    }

    func removeAll() {
        routes.removeAll()
    }

    /// Puts the signal `raw` in the batch of every route whose rules match it (its header
    /// read once; its arguments decoded only when a rule looks at `arg0` or a route takes it),
    /// and tells `observer` of it.
    func route(_ raw: OpaquePointer, observer: (any BusObserver)?) {
        guard !routes.isEmpty else {
            observer?.observe(.signal(MessageDecoder.decode(raw), routed: false), at: .now)
            return
        }
        let header = MessageDecoder.header(raw)
        var decoded: Message?
        var routed = false
        for (_, route) in routes {
            var matched = false
            for rule in route.rules where rule.matches(header) {
                if rule.arg0 != nil {
                    if decoded == nil { decoded = MessageDecoder.decodeSignal(raw, header: header) }
                    guard rule.matchesArguments(of: decoded!) else { continue }
                }
                matched = true
                break
            }
            guard matched else { continue }
            routed = true
            if decoded == nil { decoded = MessageDecoder.decodeSignal(raw, header: header) }
            route.batch.append(decoded!)
        }
        observer?.observe(.signal(decoded ?? MessageDecoder.decodeSignal(raw, header: header), routed: routed), at: .now)
    }

    /// Hands every route's batch to its handler, in registration order, and empties it. A
    /// handler may add or remove routes: they take effect for the next signal.
    func deliverBatches() {
        for (_, route) in routes where !route.batch.isEmpty {
            let batch = route.batch
            route.batch.removeAll(keepingCapacity: true)
            route.handler(batch)
        }
    }
}

/// A signal route: rules and a handler, with the batch collected during one dispatch pass.
private final class SignalRoute {
    let rules: [MatchRule]
    let handler: @Sendable ([Message]) -> Void
    var batch: [Message] = []

    init(rules: [MatchRule], handler: @escaping @Sendable ([Message]) -> Void) {
        self.rules = rules
        self.handler = handler
    }
}
