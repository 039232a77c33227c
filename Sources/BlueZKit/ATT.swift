/// Attribute Protocol limits (Bluetooth Core Specification, Vol 3, Part F).
public enum ATT {
    /// The longest attribute value: 512 bytes (Vol 3, Part F, 3.2.9).
    public static let maximumAttributeValueLength = 512

    /// The longest value one ATT Write Command carries on a link of this ATT MTU: MTU - 3
    /// bytes (opcode and handle), and never more than ``maximumAttributeValueLength``.
    /// bluetoothd 5.66 reads each datagram of an AcquireWrite socket into 512 bytes
    /// (src/gatt-client.c `sock_read`): a longer one is cut short without an error, so with an
    /// MTU over 515 the cap is what keeps the bytes intact.
    /// - Parameter mtu: the ATT MTU in bytes (23 or more).
    public static func maximumWriteWithoutResponseLength(mtu: Int) -> Int {
        min(mtu - 3, maximumAttributeValueLength)
    }
}
