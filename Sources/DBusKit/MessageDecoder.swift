internal import CDBus

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The header fields a signal is routed on (``MatchRule/matches(_:)``), read before its body.
struct SignalHeader {
    var sender: String?
    var path: ObjectPath?
    var interface: String?
    var member: String?
}

/// Reads a libdbus message into a ``Message``. Runs on the connection's queue only.
enum MessageDecoder {
    static func decode(_ raw: OpaquePointer) -> Message {
        var message = decode(raw, sender: string(dbus_message_get_sender(raw)),
                             path: string(dbus_message_get_path(raw)).map { ObjectPath($0) },
                             interface: name(dbus_message_get_interface(raw)),
                             member: name(dbus_message_get_member(raw)))
        if message.kind == .methodCall && dbus_message_get_no_reply(raw) != 0 { message.expectsReply = false }
        return message
    }

    /// The signal, with the header fields ``header(_:)`` already read for it (a signal is
    /// routed on them before its body is decoded).
    static func decodeSignal(_ raw: OpaquePointer, header: SignalHeader) -> Message {
        decode(raw, sender: header.sender, path: header.path, interface: header.interface, member: header.member)
    }

    /// The message; its body kept in its wire form (``Message/wire``) where ``WireDecoder``
    /// takes it, and decoded when first read, else decoded now.
    private static func decode(_ raw: OpaquePointer, sender: String?, path: ObjectPath?, interface: String?, member: String?) -> Message {
        let kind: Message.Kind
        switch Int32(dbus_message_get_type(raw)) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        default: kind = .signal
        }
        let replySerial = dbus_message_get_reply_serial(raw)
        let serial = dbus_message_get_serial(raw)
        let destination = string(dbus_message_get_destination(raw))
        let errorName = string(dbus_message_get_error_name(raw))
        if let wire = WireDecoder.wireBody(of: raw) {
            return Message(kind: kind, serial: serial, replySerial: replySerial == 0 ? nil : replySerial,
                           sender: sender, destination: destination, path: path, interface: interface, member: member,
                           errorName: errorName, signature: wire.signature, wire: wire)
        }
        return Message(
            kind: kind,
            serial: serial,
            replySerial: replySerial == 0 ? nil : replySerial,
            sender: sender,
            destination: destination,
            path: path,
            interface: interface,
            member: member,
            errorName: errorName,
            signature: string(dbus_message_get_signature(raw)) ?? "",
            body: iteratorBody(of: raw)
        )
    }

    /// Header fields only, for routing a signal before paying for its body.
    static func header(_ raw: OpaquePointer) -> SignalHeader {
        SignalHeader(sender: string(dbus_message_get_sender(raw)),
                     path: string(dbus_message_get_path(raw)).map { ObjectPath($0) },
                     interface: name(dbus_message_get_interface(raw)),
                     member: name(dbus_message_get_member(raw)))
    }

    /// The body's values: read from the wire form (``WireDecoder``) where it takes the
    /// message, else walked with libdbus's iterator.
    static func body(of raw: OpaquePointer) -> [DBusValue] {
        WireDecoder.body(of: raw) ?? iteratorBody(of: raw)
    }

    /// The body's values of a marshalled message, walked with libdbus's iterator; empty when
    /// libdbus does not take the bytes.
    static func iteratorBody(ofMarshalled bytes: UnsafeRawBufferPointer) -> [DBusValue] {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
              let message = dbus_message_demarshal(base, Int32(bytes.count), nil) else { return [] }
        defer { dbus_message_unref(message) }
        return iteratorBody(of: message)
    }

    /// The body's values, walked with libdbus's iterator (any message).
    static func iteratorBody(of raw: OpaquePointer) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return [] }
        var values = [DBusValue]()
        repeat {
            guard let value = readValue(&iter) else { break }
            values.append(value)
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    @inline(__always)
    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    /// The interface and member names of the bus's own interfaces, which nearly every signal
    /// a client receives carries (PropertiesChanged, InterfacesAdded, InterfacesRemoved,
    /// NameOwnerChanged; D-Bus specification, "Standard Interfaces").
    static let wellKnownNames: [String] = [
        StandardNames.properties, StandardNames.propertiesChanged,
        StandardNames.objectManager, StandardNames.interfacesAdded, StandardNames.interfacesRemoved,
        StandardNames.bus, StandardNames.nameOwnerChanged,
    ]

    /// An interface or member name: one of ``wellKnownNames`` is that constant (no allocation,
    /// and `==` against the same constant, as the match rules hold it, is decided on identity
    /// before any byte is compared; BENCHMARKS.md, "Mechanisms kept for speed"); any other is
    /// copied.
    static func name(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let length = strlen(pointer)
        for var known in wellKnownNames {
            let same = known.withUTF8 { $0.count == length && memcmp($0.baseAddress!, pointer, length) == 0 }
            if same { return known }
        }
        return String(cString: pointer)
    }

    private static func basic<T>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var value = zero
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, UnsafeMutableRawPointer($0)) }
        return value
    }

    private static func cString(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iter, UnsafeMutableRawPointer($0)) }
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// The signature of the value under the iterator (`a{sv}`); libdbus allocates it.
    private static func signature(_ iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    /// Decodes the value under `iter`; nil for an invalid (end) position.
    static func readValue(_ iter: inout DBusMessageIter) -> DBusValue? {
        switch dbus_message_iter_get_arg_type(&iter) {
        case CDBUS_TYPE_BYTE: return .byte(basic(&iter, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(&iter, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(&iter, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(basic(&iter, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(basic(&iter, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(basic(&iter, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(basic(&iter, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(basic(&iter, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(basic(&iter, Double(0)))
        case CDBUS_TYPE_STRING: return .string(cString(&iter))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(ObjectPath(cString(&iter)))
        case CDBUS_TYPE_SIGNATURE: return .signature(cString(&iter))
        case CDBUS_TYPE_UNIX_FD:
            // libdbus hands out a duplicate (close-on-exec) that the caller owns: the object
            // closes it when the value goes away, unless someone takes it (UnixFileDescriptor).
            // -1 when the message lacks the descriptor its index names.
            return .unixFD(UnixFileDescriptor(owning: basic(&iter, Int32(-1))))
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return readValue(&sub).map { .variant($0) }
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields = [DBusValue]()
            if dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                repeat {
                    guard let field = readValue(&sub) else { break }
                    fields.append(field)
                } while dbus_message_iter_next(&sub) != 0
            }
            return .structure(fields)
        case CDBUS_TYPE_ARRAY:
            return readArray(&iter)
        default:
            return nil
        }
    }

    private static func readArray(_ iter: inout DBusMessageIter) -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(&iter)
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        if elementType == CDBUS_TYPE_BYTE {
            var pointer: UnsafeMutableRawPointer? = nil
            var count: Int32 = 0
            if dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&sub, UnsafeMutableRawPointer($0), &count) }
            }
            guard let pointer, count > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
        }
        let full = signature(&iter)           // "a{sv}" or "as"
        let elementSignature = String(full.dropFirst())
        if elementType == CDBUS_TYPE_DICT_ENTRY {
            // "{sv}" -> key "s", value "v"
            let inner = elementSignature.dropFirst().dropLast()
            let keySignature = String(inner.prefix(1))
            let valueSignature = String(inner.dropFirst())
            var entries = [DBusValue.DictEntry]()
            while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &entry)
                if let key = readValue(&entry), dbus_message_iter_next(&entry) != 0, let value = readValue(&entry) {
                    entries.append(.init(key, value))
                }
                dbus_message_iter_next(&sub)
            }
            return .dictionary(keySignature: keySignature, valueSignature: valueSignature, entries)
        }
        var elements = [DBusValue]()
        while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
            guard let element = readValue(&sub) else { break }
            elements.append(element)
            dbus_message_iter_next(&sub)
        }
        return .array(elementSignature: elementSignature, elements)
    }
}
