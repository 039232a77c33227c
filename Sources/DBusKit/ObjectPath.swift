/// A D-Bus object path (`/org/bluez/hci0/dev_C0_FF_EE_00_00_01`).
///
/// The string is not validated on construction; ``BusConnection`` validates every path it
/// puts on the wire (libdbus aborts on an invalid one) and throws ``BusError/invalidArgument(_:)``.
public struct ObjectPath: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static func < (lhs: ObjectPath, rhs: ObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The path with `component` appended (`/a` + `b` = `/a/b`).
    public func appending(_ component: String) -> ObjectPath {
        rawValue == "/" ? ObjectPath("/" + component) : ObjectPath(rawValue + "/" + component)
    }

    /// The parent path, or nil for `/`.
    public var parent: ObjectPath? {
        // On the UTF-8 view: a path is ASCII, and `String.lastIndex(of:)` walks Characters
        // (grapheme breaking), several thousand instructions per device path in a scan.
        let utf8 = rawValue.utf8
        guard rawValue != "/", let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return slash == utf8.startIndex ? ObjectPath("/") : ObjectPath(String(rawValue[..<slash]))
    }

    /// The last component (`dev_C0_FF_EE_00_00_01`).
    public var lastComponent: Substring {
        let utf8 = rawValue.utf8
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return rawValue[...] }
        return rawValue[utf8.index(after: slash)...]
    }

    /// True when `self` lies directly below `parent` (`/org/bluez/hci0/dev_X` is a child of
    /// `/org/bluez/hci0`): the same as `self.parent == parent`, without building the parent.
    public func isChild(of parent: ObjectPath) -> Bool {
        // On contiguous UTF-8: the generic `starts(with:)` over two UTF-8 views cost some
        // 3,000 instructions per call, and a scan asks this of every signal.
        var child = rawValue, parentPath = parent.rawValue
        return child.withUTF8 { c in
            parentPath.withUTF8 { p in
                let slash = UInt8(ascii: "/")
                let prefix = p.count == 1 && p[0] == slash ? 0 : p.count
                guard c.count > prefix + 1, c[prefix] == slash else { return false }
                var i = 0
                while i < prefix {
                    guard c[i] == p[i] else { return false }
                    i += 1
                }
                i = prefix + 1
                while i < c.count {
                    if c[i] == slash { return false }
                    i += 1
                }
                return true
            }
        }
    }

    /// True when `self` is `ancestor` or lies below it (D-Bus `path_namespace` semantics).
    public func isDescendant(ofOrEqualTo ancestor: ObjectPath) -> Bool {
        if ancestor.rawValue == "/" || ancestor == self { return true }
        return rawValue.hasPrefix(ancestor.rawValue)
            && rawValue.utf8.dropFirst(ancestor.rawValue.utf8.count).first == UInt8(ascii: "/")
    }
}
