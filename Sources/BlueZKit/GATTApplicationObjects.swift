import DBusKit

/// The objects of a GATT application this process exports for bluetoothd
/// (bluez/doc/org.bluez.GattManager.rst, org.bluez.GattService.rst,
/// org.bluez.GattCharacteristic.rst, org.bluez.GattDescriptor.rst; 5.66: doc/gatt-api.txt):
/// the answers to the calls bluetoothd 5.66's src/gatt-database.c makes, and only to bluetoothd.
///
/// - `org.freedesktop.DBus.ObjectManager.GetManagedObjects` on the root: every service,
///   characteristic and descriptor with its properties (what bluetoothd reads once, on
///   RegisterApplication).
/// - `Properties.Get`/`GetAll` on each object: its properties; `Set`: `PropertyReadOnly`.
/// - `ReadValue(a{sv})`: the value from the options' "offset" on; an offset past the end (or
///   negative): `org.bluez.Error.InvalidOffset`.
/// - `WriteValue(ay, a{sv})`: the value up to the offset, then the bytes written;
///   `InvalidOffset` past the end, `org.bluez.Error.InvalidValueLength` beyond 512 bytes; a
///   "prepare-authorize" write is authorized and changes nothing.
/// - `StartNotify`, `StopNotify`, `Confirm` on a characteristic: events, an empty return.
/// - A read or write of an attribute whose Flags do not allow it: `org.bluez.Error.NotPermitted`
///   (bluetoothd checks first: only another client would try).
/// - Any call whose sender is not org.bluez's current unique owner:
///   `org.freedesktop.DBus.Error.AccessDenied`, and nothing changes.
/// - Other members or signatures: `org.freedesktop.DBus.Error.UnknownMethod`.
final class GATTApplicationObjects: Sendable {
    /// One exported object.
    struct Node: Sendable {
        enum Kind: Sendable { case service, characteristic, descriptor }
        var kind: Kind
        var uuid: BluetoothUUID
        /// The service's or characteristic's path this belongs to (nil for a service).
        var parent: ObjectPath?
        var primary = true
        var flags: [String] = []
        /// The characteristic's or descriptor's attribute (nil for a service).
        var attribute: GATTAttribute?
    }

    let root: ObjectPath
    /// Every service, characteristic and descriptor, in the application's order.
    let paths: [ObjectPath]
    let nodes: [ObjectPath: Node]
    private let state: Lock<(values: [ObjectPath: [UInt8]], refused: Int)>
    /// Told of each event, on the connection's queue, in order.
    private let onEvent: @Sendable (GATTServerEvent) -> Void

    static let invalidOffset = "org.bluez.Error.InvalidOffset"
    static let invalidValueLength = "org.bluez.Error.InvalidValueLength"

    init(root: ObjectPath, application: GATTApplication, onEvent: @escaping @Sendable (GATTServerEvent) -> Void) {
        self.root = root
        self.onEvent = onEvent
        var paths: [ObjectPath] = [], nodes: [ObjectPath: Node] = [:], values: [ObjectPath: [UInt8]] = [:]
        for (s, service) in application.services.enumerated() {
            let servicePath = ObjectPath("\(root.rawValue)/service\(s)")
            paths.append(servicePath)
            nodes[servicePath] = Node(kind: .service, uuid: service.uuid, primary: service.primary)
            for (c, characteristic) in service.characteristics.enumerated() {
                let path = ObjectPath("\(servicePath.rawValue)/char\(c)")
                paths.append(path)
                nodes[path] = Node(kind: .characteristic, uuid: characteristic.uuid, parent: servicePath, flags: characteristic.flags,
                                   attribute: GATTAttribute(path: path, service: service.uuid, characteristic: characteristic.uuid,
                                                            descriptor: nil, index: (s, c, nil)))
                values[path] = characteristic.value
                for (d, descriptor) in characteristic.descriptors.enumerated() {
                    let descriptorPath = ObjectPath("\(path.rawValue)/desc\(d)")
                    paths.append(descriptorPath)
                    nodes[descriptorPath] = Node(kind: .descriptor, uuid: descriptor.uuid, parent: path, flags: descriptor.flags,
                                                 attribute: GATTAttribute(path: descriptorPath, service: service.uuid,
                                                                          characteristic: characteristic.uuid,
                                                                          descriptor: descriptor.uuid, index: (s, c, d)))
                    values[descriptorPath] = descriptor.value
                }
            }
        }
        self.paths = paths
        self.nodes = nodes
        self.state = Lock((values, 0))
    }

    /// The attribute's current value.
    func value(at path: ObjectPath) -> [UInt8]? { state.withLock { $0.values[path] } }

    /// Replaces the attribute's value; returns the PropertiesChanged signal of `Value` that
    /// tells bluetoothd (which notifies or indicates subscribed centrals).
    func setValue(_ value: [UInt8], at path: ObjectPath) -> Signal {
        state.withLock { $0.values[path] = value }
        let interface = nodes[path]?.kind == .descriptor ? BlueZ.gattDescriptorInterface : BlueZ.gattCharacteristicInterface
        return Signal(path: path, interface: BlueZ.properties, member: "PropertiesChanged", arguments: [
            .string(interface),
            .dictionary(keySignature: "s", valueSignature: "v", [DBusValue.DictEntry(.string("Value"), .variant(.bytes(value)))]),
            .array(elementSignature: "s", []),
        ])
    }

    /// How many calls were refused (`AccessDenied`: not from org.bluez's owner).
    var refusedCalls: Int { state.withLock { $0.refused } }

    /// The answer to one method call on one of the paths; `bluezOwner` is org.bluez's current
    /// unique owner (nil when nobody owns it).
    func answer(_ call: Message, bluezOwner: String?) -> MethodReply {
        guard let sender = call.sender, sender == bluezOwner else {
            state.withLock { $0.refused += 1 }
            return .error(name: DBusErrorName.accessDenied, message: "only org.bluez may call this GATT application")
        }
        let member = call.member ?? "", interface = call.interface, path = call.path ?? root
        func on(_ name: String) -> Bool { interface == nil || interface == name }
        if path == root {
            guard member == "GetManagedObjects", call.signature.isEmpty, on(BlueZ.objectManager) else { return unknown(call) }
            return .values([managedObjects])
        }
        guard let node = nodes[path] else { return unknown(call) }
        let own = Self.interface(of: node.kind)
        switch (member, call.signature) {
        case ("GetAll", "s") where on(BlueZ.properties):
            guard call.body.first?.string == own else { return noInterface(call) }
            return .values([properties(of: path)])
        case ("Get", "ss") where on(BlueZ.properties):
            guard call.body.first?.string == own else { return noInterface(call) }
            let name = call.body.dropFirst().first?.string ?? ""
            guard case .dictionary(_, _, let entries) = properties(of: path),
                  let value = entries.first(where: { $0.key.string == name })?.value else {
                return .error(name: DBusErrorName.invalidArgs, message: "no property \(name) on \(own)")
            }
            return .values([value])
        case ("Set", "ssv") where on(BlueZ.properties):
            return .error(name: AdvertisementObject.propertyReadOnly, message: "the application's properties are read-only")
        case ("ReadValue", "a{sv}") where on(own) && node.kind != .service:
            return read(call, node: node, path: path)
        case ("WriteValue", "aya{sv}") where on(own) && node.kind != .service:
            return write(call, node: node, path: path)
        case ("StartNotify", ""), ("StopNotify", ""), ("Confirm", ""):
            guard on(own), node.kind == .characteristic, let attribute = node.attribute else { return unknown(call) }
            onEvent(member == "StartNotify" ? .subscribed(attribute) : member == "StopNotify" ? .unsubscribed(attribute) : .confirmed(attribute))
            return .values([])
        default:
            return unknown(call)
        }
    }

    private func read(_ call: Message, node: Node, path: ObjectPath) -> MethodReply {
        guard let attribute = node.attribute, node.flags.contains(where: { $0.hasSuffix("read") }) else {
            return .error(name: BlueZ.Error.notPermitted, message: BlueZ.NotPermittedMessage.readNotPermitted)
        }
        let options = Options(call.body.first)
        let value = self.value(at: path) ?? []
        guard (0...value.count).contains(options.offset) else {
            return .error(name: Self.invalidOffset, message: "offset \(options.offset) is past the value's \(value.count) bytes")
        }
        let answered = Array(value[options.offset...])
        onEvent(.read(GATTServerRequest(attribute: attribute, device: options.device, offset: options.offset, mtu: options.mtu,
                                        link: options.link, writeType: nil, value: answered)))
        return .values([.bytes(answered)])
    }

    private func write(_ call: Message, node: Node, path: ObjectPath) -> MethodReply {
        guard let attribute = node.attribute,
              node.flags.contains(where: { $0.hasSuffix("write") || $0 == "write-without-response" || $0 == "reliable-write" }) else {
            return .error(name: BlueZ.Error.notPermitted, message: BlueZ.NotPermittedMessage.writeNotPermitted)
        }
        let options = Options(call.body.dropFirst().first)
        if options.prepareAuthorize { return .values([]) }
        let bytes = call.body.first?.bytes ?? []
        let outcome: Result<[UInt8], GATTWriteRefusal> = state.withLock { state in
            let old = state.values[path] ?? []
            guard (0...old.count).contains(options.offset) else { return .failure(.offset(old.count)) }
            let new = Array(old[..<options.offset]) + bytes
            guard new.count <= GATTApplication.maximumValueLength else { return .failure(.length(new.count)) }
            state.values[path] = new
            return .success(new)
        }
        switch outcome {
        case .failure(.offset(let count)):
            return .error(name: Self.invalidOffset, message: "offset \(options.offset) is past the value's \(count) bytes")
        case .failure(.length(let count)):
            return .error(name: Self.invalidValueLength, message: "\(count) bytes: a value holds at most \(GATTApplication.maximumValueLength)")
        case .success:
            let type = options.type.flatMap(GATTServerRequest.WriteType.init(rawValue:)) ?? Self.writeType(flags: node.flags, call: call)
            onEvent(.written(GATTServerRequest(attribute: attribute, device: options.device, offset: options.offset, mtu: options.mtu,
                                               link: options.link, writeType: type, value: bytes)))
            return .values([])
        }
    }

    /// A write's type where bluetoothd does not say (5.66 gives no "type"): what the
    /// characteristic allows, when it allows one kind only; else nil. (5.66 calls WriteValue
    /// without wanting a reply for every write to a characteristic with
    /// write-without-response, Write Requests included, so the call does not tell either.)
    private static func writeType(flags: [String], call: Message) -> GATTServerRequest.WriteType? {
        let command = flags.contains("write-without-response")
        let request = flags.contains { $0.hasSuffix("write") && $0 != "reliable-write" }
        switch (command, request) {
        case (true, false): return .command
        case (false, true): return call.expectsReply ? .request : nil
        default: return nil
        }
    }

    private enum GATTWriteRefusal: Error { case offset(Int), length(Int) }

    /// ReadValue's and WriteValue's options.
    private struct Options {
        var offset = 0, mtu: Int?, link: String?, type: String?, device: BluetoothAddress?, prepareAuthorize = false

        init(_ value: DBusValue?) {
            guard case .dictionary(_, _, let entries)? = value else { return }
            for entry in entries {
                let inner = entry.value.unwrapped
                switch entry.key.string {
                case "offset": offset = inner.integer ?? 0
                case "mtu": mtu = inner.integer
                case "link": link = inner.string
                case "type": type = inner.string
                case "device": device = inner.objectPath.flatMap { BluetoothAddress(devicePath: $0.rawValue) }
                case "prepare-authorize": prepareAuthorize = inner.bool ?? false
                default: break
                }
            }
        }
    }

    static func interface(of kind: Node.Kind) -> String {
        switch kind {
        case .service: BlueZ.gattServiceInterface
        case .characteristic: BlueZ.gattCharacteristicInterface
        case .descriptor: BlueZ.gattDescriptorInterface
        }
    }

    /// The object's properties, as bluetoothd reads them.
    func properties(of path: ObjectPath) -> DBusValue {
        guard let node = nodes[path] else { return .dictionary(keySignature: "s", valueSignature: "v", []) }
        var entries: [(String, DBusValue)] = [("UUID", .string(node.uuid.description))]
        switch node.kind {
        case .service:
            entries.append(("Primary", .boolean(node.primary)))
        case .characteristic, .descriptor:
            entries.append((node.kind == .characteristic ? "Service" : "Characteristic", .objectPath(node.parent ?? root)))
            entries.append(("Flags", .array(elementSignature: "s", node.flags.map { .string($0) })))
            entries.append(("Value", .bytes(value(at: path) ?? [])))
        }
        return .dictionary(keySignature: "s", valueSignature: "v", entries.map { DBusValue.DictEntry(.string($0.0), .variant($0.1)) })
    }

    /// GetManagedObjects' answer: `{path: {interface: properties}}` for every object.
    private var managedObjects: DBusValue {
        .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", paths.map { path in
            DBusValue.DictEntry(.objectPath(path), .dictionary(keySignature: "s", valueSignature: "a{sv}", [
                DBusValue.DictEntry(.string(Self.interface(of: nodes[path]!.kind)), properties(of: path)),
            ]))
        })
    }

    private func noInterface(_ call: Message) -> MethodReply {
        .error(name: DBusErrorName.invalidArgs, message: "no interface \(call.body.first?.string ?? "") at \(call.path?.rawValue ?? "")")
    }

    private func unknown(_ call: Message) -> MethodReply {
        .error(name: DBusErrorName.unknownMethod,
               message: "no method \(call.member ?? "") with signature \"\(call.signature)\" on \(call.interface ?? "any interface") at \(call.path?.rawValue ?? "")")
    }
}
