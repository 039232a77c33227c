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
        // On the UTF-8 view: a path is ASCII (D-Bus specification, "Valid Object Paths").
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
    /// `/org/bluez/hci0`).
    public func isChild(of parent: ObjectPath) -> Bool {
        // `self.parent == parent`, compared on the paths' contiguous UTF-8 bytes with no
        // String made: a scan asks this of every signal, and the String views' generic
        // algorithms (lastIndex, contains, reduce) cost more than the rest of its work on one.
        var path = rawValue, parentPath = parent.rawValue
        return path.withUTF8 { bytes in
            guard bytes.count > 1, let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return false }
            let parentBytes = slash == 0 ? bytes[...0] : bytes[..<slash]
            return parentPath.withUTF8 { parentBytes.elementsEqual($0) }
        }
    }

    /// True when `self` is `ancestor` or lies below it (D-Bus `path_namespace` semantics).
    public func isDescendant(ofOrEqualTo ancestor: ObjectPath) -> Bool {
        if ancestor.rawValue == "/" || ancestor == self { return true }
        return rawValue.hasPrefix(ancestor.rawValue)
            && rawValue.utf8.dropFirst(ancestor.rawValue.utf8.count).first == UInt8(ascii: "/")
    }
}
