import DBusKit

// The properties of BlueZ's GATT client objects, typed: each field is its property's value,
// nil when BlueZ does not have it (absent, invalidated, or of an unexpected D-Bus type).
// Declared once per interface, in `table`: ``GATTService``, ``GATTCharacteristic`` and
// ``GATTDescriptor`` are read from these records. Handle is exported for a remote device's
// attributes from BlueZ 5.69 on.

/// The org.bluez.GattService1 properties (bluez/doc/org.bluez.GattService.rst).
public struct GATTServiceProperties: Sendable, Equatable {
    /// UUID: the service's UUID (nil too when malformed).
    public var uuid: BluetoothUUID?
    /// Primary: a primary service; false for a secondary one.
    public var primary: Bool?
    /// Device: the object path of the device the service belongs to.
    public var device: ObjectPath?
    /// Includes: the object paths of the services this one includes.
    public var includes: [ObjectPath]?
    /// Handle: the service's attribute handle.
    public var handle: UInt16?

    public init() {}

    /// The table: each GattService1 property BlueZKit reads, and its field.
    public static let table = PropertyTable<GATTServiceProperties>([
        .init("UUID", \.uuid),
        .init("Primary", \.primary),
        .init("Device", \.device),
        .init("Includes", \.includes),
        .init("Handle", \.handle),
    ])
}

/// The org.bluez.GattCharacteristic1 properties (bluez/doc/org.bluez.GattCharacteristic.rst).
public struct GATTCharacteristicProperties: Sendable, Equatable {
    /// UUID: the characteristic's UUID (nil too when malformed).
    public var uuid: BluetoothUUID?
    /// Service: the object path of the service it belongs to.
    public var service: ObjectPath?
    /// Flags: how the value can be used (`"read"`, `"write"`, `"write-without-response"`,
    /// `"notify"`, `"indicate"`, ...).
    public var flags: [String]?
    /// Notifying: notifications or indications are enabled.
    public var notifying: Bool?
    /// WriteAcquired: some client holds AcquireWrite's socket; absent without the
    /// `write-without-response` flag.
    public var writeAcquired: Bool?
    /// NotifyAcquired: some client holds AcquireNotify's socket; absent without the `notify`
    /// flag.
    public var notifyAcquired: Bool?
    /// MTU: the ATT MTU of the link, in bytes.
    public var mtu: UInt16?
    /// Handle: the characteristic's value attribute handle.
    public var handle: UInt16?
    /// Value: the value a read returned or a notification or indication carried. Never in
    /// the object cache (see ``ObjectCache``): only in a PropertiesChanged's values
    /// (``SessionEvent/changes(of:at:)``).
    public var value: [UInt8]?

    public init() {}

    /// The table: each GattCharacteristic1 property BlueZKit reads, and its field.
    public static let table = PropertyTable<GATTCharacteristicProperties>([
        .init("UUID", \.uuid),
        .init("Service", \.service),
        .init("Flags", \.flags),
        .init("Notifying", \.notifying),
        .init("WriteAcquired", \.writeAcquired),
        .init("NotifyAcquired", \.notifyAcquired),
        .init("MTU", \.mtu),
        .init("Handle", \.handle),
        .init("Value", \.value),
    ])
}

/// The org.bluez.GattDescriptor1 properties (bluez/doc/org.bluez.GattDescriptor.rst).
public struct GATTDescriptorProperties: Sendable, Equatable {
    /// UUID: the descriptor's UUID (nil too when malformed).
    public var uuid: BluetoothUUID?
    /// Characteristic: the object path of the characteristic it belongs to.
    public var characteristic: ObjectPath?
    /// Flags: how the value can be used (`"read"`, `"write"`, ...); bluetoothd leaves it out
    /// for a remote device's descriptors.
    public var flags: [String]?
    /// Handle: the descriptor's attribute handle.
    public var handle: UInt16?
    /// Value: the value a read returned. Never in the object cache (see ``ObjectCache``):
    /// only in a PropertiesChanged's values (``SessionEvent/changes(of:at:)``).
    public var value: [UInt8]?

    public init() {}

    /// The table: each GattDescriptor1 property BlueZKit reads, and its field.
    public static let table = PropertyTable<GATTDescriptorProperties>([
        .init("UUID", \.uuid),
        .init("Characteristic", \.characteristic),
        .init("Flags", \.flags),
        .init("Handle", \.handle),
        .init("Value", \.value),
    ])
}

extension GATTServiceProperties: InterfaceProperties {
    public static var interface: String { BlueZ.gattServiceInterface }
}

extension GATTCharacteristicProperties: InterfaceProperties {
    public static var interface: String { BlueZ.gattCharacteristicInterface }
}

extension GATTDescriptorProperties: InterfaceProperties {
    public static var interface: String { BlueZ.gattDescriptorInterface }
}
