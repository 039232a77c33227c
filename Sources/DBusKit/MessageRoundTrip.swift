internal import CDBus

/// Encodes values into a real libdbus message and decodes them back: for tests and fuzzing of
/// the codec without a bus.
package enum MessageRoundTrip {
    package static func encodeAndDecode(_ values: [DBusValue]) throws(BusError) -> [DBusValue] {
        guard let message = dbus_message_new_signal("/org/blectl/Test", "org.blectl.Test", "Values") else { throw .outOfMemory }
        defer { dbus_message_unref(message) }
        try MessageEncoder.append(values, to: message)
        return MessageDecoder.body(of: message)
    }
}

extension MessageRoundTrip {
    /// Marshals `values` as the body of a signal into D-Bus wire format.
    package static func marshal(_ values: [DBusValue]) throws(BusError) -> [UInt8] {
        guard let message = dbus_message_new_signal("/org/blectl/Test", "org.blectl.Test", "Values") else { throw .outOfMemory }
        defer { dbus_message_unref(message) }
        try MessageEncoder.append(values, to: message)
        dbus_message_set_serial(message, 1)   // a message on the wire needs a serial
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(message, &buffer, &length) != 0, let buffer else { throw .outOfMemory }
        defer { dbus_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }

    /// Demarshals wire bytes (libdbus validates them) and decodes the message; nil when
    /// libdbus rejects the bytes. The decoding under test is the one used for received messages.
    package static func demarshalAndDecode(_ bytes: [UInt8]) -> Message? {
        bytes.withUnsafeBufferPointer { buffer -> Message? in
            guard let base = buffer.baseAddress else { return nil }
            guard let message = base.withMemoryRebound(to: CChar.self, capacity: buffer.count, { pointer in
                dbus_message_demarshal(pointer, Int32(buffer.count), nil)
            }) else { return nil }
            defer { dbus_message_unref(message) }
            return MessageDecoder.decode(message)
        }
    }
}

extension MessageRoundTrip {
    /// Demarshals wire bytes and decodes the body both ways: from the wire form (nil when
    /// that decoder does not take the message) and with libdbus's iterator. Nil when libdbus
    /// rejects the bytes.
    package static func bodyBothWays(_ bytes: [UInt8]) -> (wire: [DBusValue]?, iterator: [DBusValue])? {
        bytes.withUnsafeBufferPointer { buffer -> (wire: [DBusValue]?, iterator: [DBusValue])? in
            guard let base = buffer.baseAddress else { return nil }
            guard let message = base.withMemoryRebound(to: CChar.self, capacity: buffer.count, { pointer in
                dbus_message_demarshal(pointer, Int32(buffer.count), nil)
            }) else { return nil }
            defer { dbus_message_unref(message) }
            return (WireDecoder.body(of: message), MessageDecoder.iteratorBody(of: message))
        }
    }
}

extension MessageRoundTrip {
    /// A signal as a connection hands a received one to its handlers: `values` encoded into a
    /// real libdbus message, marshalled, demarshalled (libdbus validates it) and decoded as a
    /// routed signal is, its body kept in its wire form where the wire reader takes it. Nil
    /// when libdbus rejects the message.
    package static func receivedSignal(path: ObjectPath, interface: String, member: String, sender: String,
                                       _ values: [DBusValue]) throws(BusError) -> Message? {
        guard let message = dbus_message_new_signal(path.rawValue, interface, member) else { throw .outOfMemory }
        defer { dbus_message_unref(message) }
        dbus_message_set_sender(message, sender)
        try MessageEncoder.append(values, to: message)
        dbus_message_set_serial(message, 1)
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(message, &buffer, &length) != 0, let buffer else { throw .outOfMemory }
        defer { dbus_free(buffer) }
        guard let received = dbus_message_demarshal(buffer, length, nil) else { return nil }
        defer { dbus_message_unref(received) }
        return MessageDecoder.decodeSignal(received, header: MessageDecoder.header(received))
    }
}

extension MessageRoundTrip {
    /// `values` encoded into a libdbus message (not marshalled: Unix file descriptors stay
    /// attached) and decoded as a received message is.
    package static func encodeAndDecodeMessage(_ values: [DBusValue]) throws(BusError) -> Message {
        guard let message = dbus_message_new_signal("/org/blectl/Test", "org.blectl.Test", "Values") else { throw .outOfMemory }
        defer { dbus_message_unref(message) }
        try MessageEncoder.append(values, to: message)
        return MessageDecoder.decode(message)
    }
}
