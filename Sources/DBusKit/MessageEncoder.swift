internal import CDBus
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Builds libdbus messages from Swift values. Runs on the connection's queue only.
///
/// Everything libdbus would reject with a fatal "check failed" (invalid object paths, names,
/// signatures, strings with NUL) is validated first and thrown as ``BusError/invalidArgument(_:)``.
enum MessageEncoder {
    static func methodCall(_ call: MethodCall) throws(BusError) -> OpaquePointer {
        try validate(call)
        guard let message = dbus_message_new_method_call(call.destination, call.path.rawValue,
                                                         call.interface, call.member) else {
            throw .outOfMemory
        }
        do {
            try append(call.arguments, to: message)
        } catch {
            dbus_message_unref(message)
            throw error
        }
        return message
    }

    static func signal(_ signal: Signal) throws(BusError) -> OpaquePointer {
        guard dbus_validate_path(signal.path.rawValue, nil) != 0 else { throw .invalidArgument("object path '\(signal.path)'") }
        guard dbus_validate_interface(signal.interface, nil) != 0 else { throw .invalidArgument("interface '\(signal.interface)'") }
        guard dbus_validate_member(signal.member, nil) != 0 else { throw .invalidArgument("member '\(signal.member)'") }
        if let destination = signal.destination, dbus_validate_bus_name(destination, nil) == 0 {
            throw .invalidArgument("bus name '\(destination)'")
        }
        guard let message = dbus_message_new_signal(signal.path.rawValue, signal.interface, signal.member) else { throw .outOfMemory }
        if let destination = signal.destination, dbus_message_set_destination(message, destination) == 0 {
            dbus_message_unref(message)
            throw .outOfMemory
        }
        do {
            try append(signal.arguments, to: message)
        } catch {
            dbus_message_unref(message)
            throw error
        }
        return message
    }

    static func validate(_ call: MethodCall) throws(BusError) {
        guard dbus_validate_bus_name(call.destination, nil) != 0 else { throw .invalidArgument("bus name '\(call.destination)'") }
        guard dbus_validate_path(call.path.rawValue, nil) != 0 else { throw .invalidArgument("object path '\(call.path)'") }
        guard dbus_validate_interface(call.interface, nil) != 0 else { throw .invalidArgument("interface '\(call.interface)'") }
        guard dbus_validate_member(call.member, nil) != 0 else { throw .invalidArgument("member '\(call.member)'") }
    }

    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(BusError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values { try write(value, into: &iter) }
    }

    private static func appendBasic<T>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: T) throws(BusError) {
        var copy = value
        let ok = withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iter, type, UnsafeRawPointer($0)) }
        if ok == 0 { throw .outOfMemory }
    }

    private static func appendString(_ iter: inout DBusMessageIter, _ type: Int32, _ string: String) throws(BusError) {
        guard !string.utf8.contains(0) else { throw .invalidArgument("string with an embedded NUL") }
        let ok = string.withCString { pointer -> dbus_bool_t in
            var p: UnsafePointer<CChar>? = pointer
            return withUnsafePointer(to: &p) { dbus_message_iter_append_basic(&iter, type, UnsafeRawPointer($0)) }
        }
        if ok == 0 { throw .outOfMemory }
    }

    private static func container(_ iter: inout DBusMessageIter, _ type: Int32, _ signature: String?,
                                  _ body: (inout DBusMessageIter) throws(BusError) -> Void) throws(BusError) {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t
        if let signature {
            let complete = type == CDBUS_TYPE_ARRAY ? "a" + signature : signature
            guard dbus_signature_validate_single(complete, nil) != 0 else { throw .invalidArgument("signature '\(complete)'") }
            opened = dbus_message_iter_open_container(&iter, type, signature, &sub)
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub)
        }
        guard opened != 0 else { throw .outOfMemory }
        do {
            try body(&sub)
        } catch {
            dbus_message_iter_abandon_container(&iter, &sub)
            throw error
        }
        guard dbus_message_iter_close_container(&iter, &sub) != 0 else { throw .outOfMemory }
    }

    static func write(_ value: DBusValue, into iter: inout DBusMessageIter) throws(BusError) {
        switch value {
        case .byte(let v): try appendBasic(&iter, CDBUS_TYPE_BYTE, v)
        case .boolean(let v): try appendBasic(&iter, CDBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): try appendBasic(&iter, CDBUS_TYPE_INT16, v)
        case .uint16(let v): try appendBasic(&iter, CDBUS_TYPE_UINT16, v)
        case .int32(let v): try appendBasic(&iter, CDBUS_TYPE_INT32, v)
        case .uint32(let v): try appendBasic(&iter, CDBUS_TYPE_UINT32, v)
        case .int64(let v): try appendBasic(&iter, CDBUS_TYPE_INT64, v)
        case .uint64(let v): try appendBasic(&iter, CDBUS_TYPE_UINT64, v)
        case .double(let v): try appendBasic(&iter, CDBUS_TYPE_DOUBLE, v)
        case .unixFD(let descriptor):
            // libdbus duplicates the descriptor into the message; the caller's stays its own.
            // The lock is held meanwhile, so it cannot be closed under libdbus.
            let appended = try descriptor.withDescriptor { (fd: Int32) throws(BusError) -> Bool in
                guard fcntl(fd, F_GETFD) >= 0 else { return false }
                try appendBasic(&iter, CDBUS_TYPE_UNIX_FD, fd)
                return true
            }
            guard appended == true else { throw .invalidArgument("a file descriptor already closed or taken") }
        case .string(let s): try appendString(&iter, CDBUS_TYPE_STRING, s)
        case .objectPath(let p):
            guard dbus_validate_path(p.rawValue, nil) != 0 else { throw .invalidArgument("object path '\(p)'") }
            try appendString(&iter, CDBUS_TYPE_OBJECT_PATH, p.rawValue)
        case .signature(let s):
            guard dbus_signature_validate(s, nil) != 0 else { throw .invalidArgument("signature '\(s)'") }
            try appendString(&iter, CDBUS_TYPE_SIGNATURE, s)
        case .bytes(let bytes):
            try container(&iter, CDBUS_TYPE_ARRAY, "y") { (sub: inout DBusMessageIter) throws(BusError) in
                let ok = bytes.withUnsafeBufferPointer { buffer -> dbus_bool_t in
                    var base: UnsafePointer<UInt8>? = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                    return withUnsafePointer(to: &base) {
                        dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, UnsafeRawPointer($0), Int32(buffer.count))
                    }
                }
                if ok == 0 { throw .outOfMemory }
            }
        case .array(let elementSignature, let elements):
            try container(&iter, CDBUS_TYPE_ARRAY, elementSignature) { (sub: inout DBusMessageIter) throws(BusError) in
                for element in elements {
                    guard element.signature == elementSignature else {
                        throw .invalidArgument("array element '\(element.signature)' in 'a\(elementSignature)'")
                    }
                    try write(element, into: &sub)
                }
            }
        case .dictionary(let keySignature, let valueSignature, let entries):
            try container(&iter, CDBUS_TYPE_ARRAY, "{" + keySignature + valueSignature + "}") { (sub: inout DBusMessageIter) throws(BusError) in
                for entry in entries {
                    guard entry.key.signature == keySignature, entry.value.signature == valueSignature else {
                        throw .invalidArgument("dictionary entry '{\(entry.key.signature)\(entry.value.signature)}' in 'a{\(keySignature)\(valueSignature)}'")
                    }
                    try container(&sub, CDBUS_TYPE_DICT_ENTRY, nil) { (e: inout DBusMessageIter) throws(BusError) in
                        try write(entry.key, into: &e)
                        try write(entry.value, into: &e)
                    }
                }
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgument("empty structure") }
            try container(&iter, CDBUS_TYPE_STRUCT, nil) { (sub: inout DBusMessageIter) throws(BusError) in
                for field in fields { try write(field, into: &sub) }
            }
        case .variant(let inner):
            try container(&iter, CDBUS_TYPE_VARIANT, inner.signature) { (sub: inout DBusMessageIter) throws(BusError) in
                try write(inner, into: &sub)
            }
        }
    }
}
