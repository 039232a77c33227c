import DBusKit

/// The org.bluez.LEAdvertisement1 object this process exports for bluetoothd to read
/// (bluez/doc/org.bluez.LEAdvertisement.rst; 5.66: doc/advertising-api.txt): the answers to
/// the calls bluetoothd 5.66 makes, and only to bluetoothd.
///
/// bluetoothd reads the object through a GDBusClient rooted at its path (src/advertising.c,
/// gdbus/client.c): ObjectManager.GetManagedObjects on the path, then
/// Properties.GetAll("org.bluez.LEAdvertisement1"); it calls Release when it drops the
/// advertisement itself. Its answers:
/// - `org.freedesktop.DBus.ObjectManager.GetManagedObjects`: this one object,
///   `{path: {"org.bluez.LEAdvertisement1": properties}}`.
/// - `org.freedesktop.DBus.Properties.GetAll`/`Get`: the properties
///   (``LEAdvertisement/properties``); another interface or an unknown property:
///   `org.freedesktop.DBus.Error.InvalidArgs`; `Set`: `PropertyReadOnly`.
/// - `org.freedesktop.DBus.Introspectable.Introspect`: the interfaces above, for tools
///   (`busctl introspect`); bluetoothd does not ask.
/// - `org.bluez.LEAdvertisement1.Release`: an empty return; the advertisement is released
///   (bluetoothd has unregistered it already), once.
/// - Any call whose sender is not org.bluez's current unique owner (as the session tracks it,
///   in order with its signals): `org.freedesktop.DBus.Error.AccessDenied`, and nothing
///   changes. Anyone on the bus may call an exported object; only bluetoothd may read or
///   release this one.
/// - Other members or signatures: `org.freedesktop.DBus.Error.UnknownMethod`.
final class AdvertisementObject: Sendable {
    /// One call received, and how it was answered.
    struct Request: Sendable, Equatable {
        var interface: String?
        var member: String
        var sender: String?
        /// Whether it got a method return (false: an error reply).
        var accepted: Bool
    }

    let path: ObjectPath
    let advertisement: LEAdvertisement
    private let state = Lock<(requests: [Request], released: Bool)>(([], false))
    /// Runs once, on the connection's queue, when bluetoothd calls Release.
    private let onRelease: @Sendable () -> Void

    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"

    init(path: ObjectPath, advertisement: LEAdvertisement, onRelease: @escaping @Sendable () -> Void) {
        self.path = path
        self.advertisement = advertisement
        self.onRelease = onRelease
    }

    /// The calls received so far, in order.
    var requests: [Request] { state.withLock { $0.requests } }

    /// Whether bluetoothd called Release.
    var isReleased: Bool { state.withLock { $0.released } }

    /// The answer to one method call on the object's path; `bluezOwner` is org.bluez's current
    /// unique owner (nil when nobody owns it).
    func answer(_ call: Message, bluezOwner: String?) -> MethodReply {
        let reply = reply(to: call, bluezOwner: bluezOwner)
        let accepted = if case .values = reply { true } else { false }
        let releasedNow = state.withLock { state -> Bool in
            state.requests.append(Request(interface: call.interface, member: call.member ?? "", sender: call.sender, accepted: accepted))
            guard accepted, call.member == "Release", !state.released else { return false }
            state.released = true
            return true
        }
        if releasedNow { onRelease() }
        return reply
    }

    private func reply(to call: Message, bluezOwner: String?) -> MethodReply {
        guard let sender = call.sender, sender == bluezOwner else {
            return .error(name: DBusErrorName.accessDenied, message: "only org.bluez may call this advertisement")
        }
        let member = call.member ?? ""
        let interface = call.interface
        func on(_ name: String) -> Bool { interface == nil || interface == name }
        switch (member, call.signature) {
        case ("GetManagedObjects", "") where on(BlueZ.objectManager):
            let interfaces = DBusValue.dictionary(keySignature: "s", valueSignature: "a{sv}", [
                DBusValue.DictEntry(.string(BlueZ.advertisementInterface), advertisement.propertiesDictionary),
            ])
            return .values([.dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", [DBusValue.DictEntry(.objectPath(path), interfaces)])])
        case ("GetAll", "s") where on(BlueZ.properties):
            guard call.body.first?.string == BlueZ.advertisementInterface else { return noInterface(call) }
            return .values([advertisement.propertiesDictionary])
        case ("Get", "ss") where on(BlueZ.properties):
            guard call.body.first?.string == BlueZ.advertisementInterface else { return noInterface(call) }
            let name = call.body.dropFirst().first?.string ?? ""
            guard let value = advertisement.properties.first(where: { $0.name == name })?.value else {
                return .error(name: DBusErrorName.invalidArgs, message: "no property \(name) on \(BlueZ.advertisementInterface)")
            }
            return .values([.variant(value)])
        case ("Set", "ssv") where on(BlueZ.properties):
            return .error(name: Self.propertyReadOnly, message: "the advertisement's properties are read-only")
        case ("Introspect", "") where on(Self.introspectable):
            return .values([.string(introspection)])
        case ("Release", "") where on(BlueZ.advertisementInterface):
            return .values([])
        default:
            return .error(name: DBusErrorName.unknownMethod,
                          message: "no method \(member) with signature \"\(call.signature)\" on \(interface ?? "any interface") at \(path)")
        }
    }

    private func noInterface(_ call: Message) -> MethodReply {
        .error(name: DBusErrorName.invalidArgs, message: "no interface \(call.body.first?.string ?? "") at \(path)")
    }

    /// The introspection XML: the object's interfaces and the names of its properties.
    private var introspection: String {
        let properties = advertisement.properties.map { #"    <property name="\#($0.name)" type="\#($0.value.signature)" access="read"/>"# }
        return """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
              <interface name="\(Self.introspectable)"><method name="Introspect"><arg type="s" direction="out"/></method></interface>
              <interface name="\(BlueZ.properties)">
                <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
                <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
              </interface>
              <interface name="\(BlueZ.objectManager)">
                <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
              </interface>
              <interface name="\(BlueZ.advertisementInterface)">
                <method name="Release"><annotation name="org.freedesktop.DBus.Method.NoReply" value="true"/></method>
            \(properties.joined(separator: "\n"))
              </interface>
            </node>

            """
    }
}
