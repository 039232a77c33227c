/// A received D-Bus message, decoded on the connection's queue into plain values.
public struct Message: Sendable {
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    public var serial: UInt32
    /// For method returns and errors: the serial of the call answered.
    public var replySerial: UInt32?
    public var sender: String?
    public var destination: String?
    public var path: ObjectPath?
    public var interface: String?
    public var member: String?
    /// For errors: the error name (`org.bluez.Error.Failed`).
    public var errorName: String?
    /// The body's signature (`oa{sa{sv}}`).
    public var signature: String
    /// The body, one value per top-level type in ``signature``. A received message's body is
    /// decoded when first read (it is kept in its wire form until then).
    public var body: [DBusValue] {
        get { decodedBody ?? wire?.values ?? [] }
        set {
            decodedBody = newValue
            wire = nil
        }
    }
    private var decodedBody: [DBusValue]?
    /// A received message's body in its wire form, for readers that take what they need from
    /// the bytes; nil for a message made here, an empty body, or one the wire reader does not
    /// take (big-endian, or carrying Unix file descriptors), whose ``body`` is decoded.
    package private(set) var wire: WireBody?

    public init(kind: Kind, serial: UInt32 = 0, replySerial: UInt32? = nil, sender: String? = nil,
                destination: String? = nil, path: ObjectPath? = nil, interface: String? = nil,
                member: String? = nil, errorName: String? = nil, signature: String = "",
                body: [DBusValue] = []) {
        self.kind = kind
        self.serial = serial
        self.replySerial = replySerial
        self.sender = sender
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.signature = signature
        self.decodedBody = body
    }

    /// A received message whose body is kept in its wire form.
    init(kind: Kind, serial: UInt32, replySerial: UInt32?, sender: String?, destination: String?,
         path: ObjectPath?, interface: String?, member: String?, errorName: String?, signature: String,
         wire: WireBody) {
        self.init(kind: kind, serial: serial, replySerial: replySerial, sender: sender, destination: destination,
                  path: path, interface: interface, member: member, errorName: errorName, signature: signature)
        self.decodedBody = nil
        self.wire = wire
    }

    /// The error's message text: the first body argument when it is a string (D-Bus convention).
    public var errorMessage: String {
        body.first?.string ?? ""
    }
}

/// A method call to send: destination bus name, object path, interface, member and arguments.
public struct MethodCall: Sendable {
    public var destination: String
    public var path: ObjectPath
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(destination: String, path: ObjectPath, interface: String, member: String,
                arguments: [DBusValue] = []) {
        self.destination = destination
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// A signal to emit: object path, interface, member, arguments, and optionally one
/// destination (a unicast signal, delivered to that connection only, match rules or not).
public struct Signal: Sendable {
    public var path: ObjectPath
    public var interface: String
    public var member: String
    public var destination: String?
    public var arguments: [DBusValue]

    public init(path: ObjectPath, interface: String, member: String, destination: String? = nil, arguments: [DBusValue] = []) {
        self.path = path
        self.interface = interface
        self.member = member
        self.destination = destination
        self.arguments = arguments
    }
}
