import DBusKit

/// What happens to a registered GATT application (``GATTApplicationHandle/events``), in the
/// order bluetoothd's calls and signals arrived.
public enum GATTServerEvent: Sendable, Equatable {
    /// A central read a characteristic or descriptor (bluetoothd called ReadValue); the
    /// request's ``GATTServerRequest/value`` is what was answered.
    case read(GATTServerRequest)
    /// A central wrote one (WriteValue); ``GATTServerRequest/value`` is what it wrote, and the
    /// attribute's value is now the old one up to the offset followed by it.
    case written(GATTServerRequest)
    /// A central enabled notifications or indications of a characteristic (bluetoothd called
    /// StartNotify: for the first central to write its Client Characteristic Configuration).
    case subscribed(GATTAttribute)
    /// The last subscribed central disabled them, or its link went (StopNotify).
    case unsubscribed(GATTAttribute)
    /// A central confirmed an indication of the characteristic (Confirm).
    case confirmed(GATTAttribute)
    /// A device's link to the adapter came up (Device1.Connected true, or a device object
    /// added connected): a central that connected. BlueZ does not say which side opened a
    /// link, so one this host opened meanwhile shows too.
    case connected(BluetoothAddress)
    /// That link went down (Connected false, or the device object removed).
    case disconnected(BluetoothAddress)
}

/// A ReadValue or WriteValue bluetoothd made on a central's behalf, with its options
/// (bluez/doc/org.bluez.GattCharacteristic.rst, org.bluez.GattDescriptor.rst).
public struct GATTServerRequest: Sendable, Equatable {
    /// How a central wrote: the options' "type"; where bluetoothd gives none (5.66), the only
    /// kind the characteristic allows (``command`` for write-without-response alone,
    /// ``request`` for write alone), else unknown (nil).
    public enum WriteType: String, Sendable {
        /// A Write Command (write without response).
        case command
        /// A Write Request: the central waits for the response.
        case request
        /// A Reliable Write (prepared writes, executed).
        case reliable
    }

    public var attribute: GATTAttribute
    /// The central: the options' "device" (a Device1 object path), as an address; nil when
    /// bluetoothd gives none.
    public var device: BluetoothAddress?
    /// The offset into the value, in bytes ("offset", 0 when absent).
    public var offset: Int
    /// The link's ATT MTU, in bytes ("mtu"), when bluetoothd gives it.
    public var mtu: Int?
    /// "LE" or "BR/EDR" ("link"), when bluetoothd gives it.
    public var link: String?
    /// A write's type; nil for a read, or a write whose type bluetoothd did not say.
    public var writeType: WriteType?
    /// A read: the bytes answered (from the offset on); a write: the bytes written.
    public var value: [UInt8]

    public init(attribute: GATTAttribute, device: BluetoothAddress?, offset: Int, mtu: Int?, link: String?,
                writeType: WriteType?, value: [UInt8]) {
        self.attribute = attribute
        self.device = device
        self.offset = offset
        self.mtu = mtu
        self.link = link
        self.writeType = writeType
        self.value = value
    }
}
