/// The reply handlers of a connection's calls in flight, by the serial of the call.
///
/// Calls are few at a time and answered mostly in the order sent, so they are kept in an
/// array in that order and found by a search from its front. Past ``arrayLimit`` calls in
/// flight (a library user issuing many at once), a dictionary takes over.
///
/// Why not always a `Dictionary<UInt32, …>`: the first dictionary with a new key type makes
/// the Swift runtime look up the key's `Hashable` conformance, a scan of the binary's
/// conformance tables that cost every start-up some 200,000 instructions (issue 12). The
/// type is not generic so that the dictionary's metadata is made only when it is used.
struct ReplyTable {
    typealias Handler = @Sendable (Result<Message, BusError>) -> Void

    /// Calls in flight kept in the array before the dictionary takes over.
    static let arrayLimit = 64

    private var ordered: [(serial: UInt32, handler: Handler)] = []
    private var hashed: [UInt32: Handler]?

    var count: Int { hashed?.count ?? ordered.count }

    /// Registers `handler` for the reply to the call with `serial` (serials are unique among
    /// calls in flight: libdbus hands them out in sequence).
    mutating func insert(_ handler: @escaping Handler, for serial: UInt32) {
        if hashed != nil {
            hashed![serial] = handler
        } else if ordered.count < Self.arrayLimit {
            ordered.append((serial, handler))
        } else {
            var table = [UInt32: Handler](minimumCapacity: ordered.count * 2)
            for entry in ordered { table[entry.serial] = entry.handler }
            table[serial] = handler
            ordered.removeAll()
            hashed = table
        }
    }

    /// Removes and returns the handler for `serial`; nil when there is none (a call given up
    /// on, or a reply nobody asked for).
    mutating func remove(_ serial: UInt32) -> Handler? {
        if hashed != nil { return hashed!.removeValue(forKey: serial) }
        guard let index = ordered.firstIndex(where: { $0.serial == serial }) else { return nil }
        return ordered.remove(at: index).handler
    }

    /// Removes and returns every handler, in the order registered where that is known.
    mutating func removeAll() -> [Handler] {
        defer {
            ordered.removeAll()
            hashed = nil
        }
        if let hashed { return hashed.sorted { $0.key < $1.key }.map(\.value) }
        return ordered.map(\.handler)
    }
}
