/// A received D-Bus message, decoded on the connection's queue into plain values.
///
/// A value type whose fields live in one shared, immutable-until-written storage object
/// (copy on write): handing a message to a route's batch, an event or an observer costs one
/// reference count, not one per field (a signal is copied three to five times on its way to
/// the code that reads it).
public struct Message: Sendable {
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal
    }

    /// The fields. Shared between copies; a setter writes to a copy of its own unless this
    /// message holds the only reference.
    private final class Storage: @unchecked Sendable {
        // @unchecked: written only through `Message`'s setters, after `isKnownUniquelyReferenced`
        // made sure no other message (so no other thread) holds this object.
        var kind: Kind
        var serial: UInt32
        var replySerial: UInt32?
        var sender: String?
        var destination: String?
        var path: ObjectPath?
        var interface: String?
        var member: String?
        var errorName: String?
        var signature: String
        var decodedBody: [DBusValue]?
        var wire: WireBody?

        init(kind: Kind, serial: UInt32, replySerial: UInt32?, sender: String?, destination: String?,
             path: ObjectPath?, interface: String?, member: String?, errorName: String?, signature: String,
             decodedBody: [DBusValue]?, wire: WireBody?) {
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
            self.decodedBody = decodedBody
            self.wire = wire
        }

        func copy() -> Storage {
            Storage(kind: kind, serial: serial, replySerial: replySerial, sender: sender, destination: destination,
                    path: path, interface: interface, member: member, errorName: errorName, signature: signature,
                    decodedBody: decodedBody, wire: wire)
        }
    }

    private var storage: Storage

    /// `storage`, made this message's own first when another message shares it.
    private var unique: Storage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
            return storage
        }
    }

    public var kind: Kind {
        get { storage.kind }
        set { unique.kind = newValue }
    }
    public var serial: UInt32 {
        get { storage.serial }
        set { unique.serial = newValue }
    }
    /// For method returns and errors: the serial of the call answered.
    public var replySerial: UInt32? {
        get { storage.replySerial }
        set { unique.replySerial = newValue }
    }
    public var sender: String? {
        get { storage.sender }
        set { unique.sender = newValue }
    }
    public var destination: String? {
        get { storage.destination }
        set { unique.destination = newValue }
    }
    public var path: ObjectPath? {
        get { storage.path }
        set { unique.path = newValue }
    }
    public var interface: String? {
        get { storage.interface }
        set { unique.interface = newValue }
    }
    public var member: String? {
        get { storage.member }
        set { unique.member = newValue }
    }
    /// For errors: the error name (`org.bluez.Error.Failed`).
    public var errorName: String? {
        get { storage.errorName }
        set { unique.errorName = newValue }
    }
    /// The body's signature (`oa{sa{sv}}`).
    public var signature: String {
        get { storage.signature }
        set { unique.signature = newValue }
    }
    /// The body, one value per top-level type in ``signature``. A received message's body is
    /// decoded when first read (it is kept in its wire form until then).
    public var body: [DBusValue] {
        get { storage.decodedBody ?? storage.wire?.values ?? [] }
        set {
            let storage = unique
            storage.decodedBody = newValue
            storage.wire = nil
        }
    }
    /// A received message's body in its wire form, for readers that take what they need from
    /// the bytes; nil for a message made here, an empty body, or one the wire reader does not
    /// take (big-endian, or carrying Unix file descriptors), whose ``body`` is decoded.
    package var wire: WireBody? { storage.wire }

    public init(kind: Kind, serial: UInt32 = 0, replySerial: UInt32? = nil, sender: String? = nil,
                destination: String? = nil, path: ObjectPath? = nil, interface: String? = nil,
                member: String? = nil, errorName: String? = nil, signature: String = "",
                body: [DBusValue] = []) {
        storage = Storage(kind: kind, serial: serial, replySerial: replySerial, sender: sender, destination: destination,
                          path: path, interface: interface, member: member, errorName: errorName, signature: signature,
                          decodedBody: body, wire: nil)
    }

    /// A received message whose body is kept in its wire form.
    init(kind: Kind, serial: UInt32, replySerial: UInt32?, sender: String?, destination: String?,
         path: ObjectPath?, interface: String?, member: String?, errorName: String?, signature: String,
         wire: WireBody) {
        storage = Storage(kind: kind, serial: serial, replySerial: replySerial, sender: sender, destination: destination,
                          path: path, interface: interface, member: member, errorName: errorName, signature: signature,
                          decodedBody: nil, wire: wire)
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
