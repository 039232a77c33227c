/// Why bluetoothd says a device's link went down: the arguments of its
/// `Device1.Disconnected(string reason, string message)` signal (BlueZ 5.83 and later, sent
/// on the device's object just before Connected becomes false; bluez/doc/org.bluez.Device.rst,
/// src/device.c device_disconnected). Older bluetoothd sends none.
public struct DisconnectReason: Sendable, Hashable, CustomStringConvertible {
    /// The reason's D-Bus name as sent: `org.bluez.Reason.Unknown`, `.Timeout` (the link
    /// supervision timeout expired: out of range, switched off), `.Local` (ended by this
    /// host), `.Remote` (ended by the device), `.Authentication` (an authentication failure)
    /// or `.Suspend` (this host suspending).
    public var name: String
    /// bluetoothd's text for it: "Connection timeout", "Connection terminated by remote
    /// user", ...
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// The signal's member on org.bluez.Device1.
    static let member = "Disconnected"

    public var description: String { "\(name): \(message)" }
}
