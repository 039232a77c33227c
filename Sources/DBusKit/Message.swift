/// A received D-Bus message, decoded on the connection's queue into plain values.
///
/// A value type whose fields live in one shared, immutable-until-written storage object
/// (copy on write): handing a message to a route's batch, an event or an observer costs one
/// reference count, not one per field (a signal is copied three to five times on its way to
/// the code that reads it; BENCHMARKS.md, "Mechanisms kept for speed").
public struct Message: Sendable {
    public enum Kind: Sendable, Equatable {
        case methodCall, methodReturn, error, signal
    }

    /// The fields, as the struct held them before it shared them.
    private struct Fields {
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
        var noReplyExpected = false
    }

    /// The fields, shared between copies; a setter writes to a copy of its own unless this
    /// message holds the only reference.
    private final class Storage: @unchecked Sendable {
        // @unchecked: written only through `Message`'s setters, after `isKnownUniquelyReferenced`
        // made sure no other message (so no other thread) holds this object.
        var fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var storage: Storage

    /// Writes the fields, copied first when another message shares them.
    private mutating func write(_ body: (inout Fields) -> Void) {
        if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.fields) }
        body(&storage.fields)
    }

    /// For a method call: false when its sender set NO_REPLY_EXPECTED (it wants no answer).
    public internal(set) var expectsReply: Bool {
        get { !storage.fields.noReplyExpected }
        set { write { $0.noReplyExpected = !newValue } }
    }

    public var kind: Kind {
        get { storage.fields.kind }
        set { write { $0.kind = newValue } }
    }
    public var serial: UInt32 {
        get { storage.fields.serial }
        set { write { $0.serial = newValue } }
    }
    /// For method returns and errors: the serial of the call answered.
    public var replySerial: UInt32? {
        get { storage.fields.replySerial }
        set { write { $0.replySerial = newValue } }
    }
    public var sender: String? {
        get { storage.fields.sender }
        set { write { $0.sender = newValue } }
    }
    public var destination: String? {
        get { storage.fields.destination }
        set { write { $0.destination = newValue } }
    }
    public var path: ObjectPath? {
        get { storage.fields.path }
        set { write { $0.path = newValue } }
    }
    public var interface: String? {
        get { storage.fields.interface }
        set { write { $0.interface = newValue } }
    }
    public var member: String? {
        get { storage.fields.member }
        set { write { $0.member = newValue } }
    }
    /// For errors: the error name (`org.bluez.Error.Failed`).
    public var errorName: String? {
        get { storage.fields.errorName }
        set { write { $0.errorName = newValue } }
    }
    /// The body's signature (`oa{sa{sv}}`).
    public var signature: String {
        get { storage.fields.signature }
        set { write { $0.signature = newValue } }
    }
    /// The body, one value per top-level type in ``signature``. A received message's body is
    /// decoded when first read (it is kept in its wire form until then).
    public var body: [DBusValue] {
        get { storage.fields.decodedBody ?? storage.fields.wire?.values ?? [] }
        set {
            write {
                $0.decodedBody = newValue
                $0.wire = nil
            }
        }
    }
    /// A received message's body in its wire form, for readers that take what they need from
    /// the bytes; nil for a message made here, an empty body, or one the wire reader does not
    /// take (big-endian, or carrying Unix file descriptors), whose ``body`` is decoded.
    package var wire: WireBody? { storage.fields.wire }

    public init(kind: Kind, serial: UInt32 = 0, replySerial: UInt32? = nil, sender: String? = nil,
                destination: String? = nil, path: ObjectPath? = nil, interface: String? = nil,
                member: String? = nil, errorName: String? = nil, signature: String = "",
                body: [DBusValue] = []) {
        storage = Storage(Fields(kind: kind, serial: serial, replySerial: replySerial, sender: sender, destination: destination,
                                 path: path, interface: interface, member: member, errorName: errorName, signature: signature,
                                 decodedBody: body, wire: nil))
    }

    /// A received message whose body is kept in its wire form.
    init(kind: Kind, serial: UInt32, replySerial: UInt32?, sender: String?, destination: String?,
         path: ObjectPath?, interface: String?, member: String?, errorName: String?, signature: String,
         wire: WireBody) {
        storage = Storage(Fields(kind: kind, serial: serial, replySerial: replySerial, sender: sender, destination: destination,
                                 path: path, interface: interface, member: member, errorName: errorName, signature: signature,
                                 decodedBody: nil, wire: wire))
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
