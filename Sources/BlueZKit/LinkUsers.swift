import DBusKit

/// The users of each device's link within one session (``Device/withConnection(timeout:disconnectTimeout:isolation:_:)``
/// calls in progress), so that two of them share the link and it is disconnected only when
/// the last one leaves, and only if one of them connected it (a link found up, connected by
/// another client, is left to that client).
final class LinkUsers: Sendable {
    private struct Link {
        var users = 0
        /// A user of this session sent the Connect that brought the link up.
        var connectedHere = false
    }

    private let links = Lock([ObjectPath: Link]())

    /// A user begins using the link of the device at `path`.
    func enter(_ path: ObjectPath) {
        links.withLock { $0[path, default: Link()].users += 1 }
    }

    /// A user of the link connected it (``ConnectionOrigin/connectedByUs``).
    func connected(_ path: ObjectPath) {
        links.withLock { $0[path]?.connectedHere = true }
    }

    /// A user is done with the link.
    /// - Returns: whether it was the last user of a link connected here, which it must disconnect.
    func leave(_ path: ObjectPath) -> Bool {
        links.withLock { links in
            guard var link = links[path] else { return false }
            link.users -= 1
            guard link.users == 0 else {
                links[path] = link
                return false
            }
            links[path] = nil
            return link.connectedHere
        }
    }

    /// The users of the link of the device at `path` (0: none).
    func users(of path: ObjectPath) -> Int {
        links.withLock { $0[path]?.users ?? 0 }
    }
}
