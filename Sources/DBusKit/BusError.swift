/// Errors of the D-Bus layer.
public enum BusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peer answered with a D-Bus error: its name (`org.bluez.Error.Failed`) and message
    /// (`le-connection-abort-by-local`), both kept as sent.
    case errorReply(name: String, message: String)
    /// Connecting to the bus failed (no socket, refused, authentication); libdbus's error
    /// name and message.
    case connectionFailed(name: String, message: String)
    /// The connection to the bus was lost, or closed by us, before the reply came.
    case disconnected
    /// No reply within the timeout given to ``BusConnection/call(_:timeout:)``.
    case timedOut
    /// A value or name that libdbus would reject (invalid object path, member name, embedded NUL).
    case invalidArgument(String)
    /// libdbus could not allocate memory for a message.
    case outOfMemory

    public var description: String {
        switch self {
        case .errorReply(let name, let message): "\(name): \(message)"
        case .connectionFailed(let name, let message): "cannot connect to the bus (\(name)): \(message)"
        case .disconnected: "the D-Bus connection was lost"
        case .timedOut: "no reply before the timeout"
        case .invalidArgument(let what): "invalid D-Bus argument: \(what)"
        case .outOfMemory: "out of memory"
        }
    }

    /// The D-Bus error name of an ``errorReply(name:message:)``, else nil.
    public var errorName: String? {
        if case .errorReply(let name, _) = self { return name }
        return nil
    }
}

/// Well-known D-Bus error names (D-Bus specification and `dbus-protocol.h`).
public enum DBusErrorName {
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
}
