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
