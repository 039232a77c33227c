import DBusKit

/// A GATT application of this host's own: the services, characteristics and descriptors a
/// local GATT server offers to centrals, as org.bluez.GattService1, GattCharacteristic1 and
/// GattDescriptor1 objects describe them to bluetoothd (bluez/doc/org.bluez.GattManager.rst;
/// 5.66: doc/gatt-api.txt). Register it with
/// ``Adapter/withGATTApplication(_:path:timeout:isolation:_:)``.
///
/// Not to be confused with ``GATTService`` and ``GATTCharacteristic``, what a *remote*
/// device offers as bluetoothd's client side sees it.
///
/// ```swift
/// let battery = GATTApplication(services: [
///         .init(uuid: .batteryService, characteristics: [
///         .init(uuid: .batteryLevel, flags: ["read", "notify"], value: [87]),
///     ]),
/// ])
/// ```
public struct GATTApplication: Sendable, Equatable {
    /// A GATT service (org.bluez.GattService1).
    public struct Service: Sendable, Equatable {
        public var uuid: BluetoothUUID
        /// `Primary`: a primary service (true) or a secondary one.
        public var primary: Bool
        public var characteristics: [Characteristic]

        public init(uuid: BluetoothUUID, primary: Bool = true, characteristics: [Characteristic] = []) {
            self.uuid = uuid
            self.primary = primary
            self.characteristics = characteristics
        }
    }

    /// A GATT characteristic (org.bluez.GattCharacteristic1).
    public struct Characteristic: Sendable, Equatable {
        public var uuid: BluetoothUUID
        /// `Flags`, BlueZ's names of the characteristic's properties and permissions: "read",
        /// "write", "write-without-response", "notify", "indicate", "encrypt-read", ...
        /// (``GATTApplication/characteristicFlags``); at least one.
        public var flags: [String]
        /// The value a read starts with, at most 512 bytes (Core Specification Vol 3 Part F
        /// 3.2.9); a write or ``GATTApplicationHandle/setValue(_:of:)`` replaces it.
        public var value: [UInt8]
        public var descriptors: [Descriptor]

        public init(uuid: BluetoothUUID, flags: [String], value: [UInt8] = [], descriptors: [Descriptor] = []) {
            self.uuid = uuid
            self.flags = flags
            self.value = value
            self.descriptors = descriptors
        }

        /// Whether a central may subscribe: "notify", "indicate" or one of their encrypted forms.
        public var canNotify: Bool { flags.contains { $0.hasSuffix("notify") || $0.hasSuffix("indicate") } }
    }

    /// A GATT descriptor (org.bluez.GattDescriptor1). bluetoothd makes the Client
    /// Characteristic Configuration descriptor (0x2902) of each characteristic that notifies
    /// or indicates, and the Characteristic Extended Properties one (0x2900) itself.
    public struct Descriptor: Sendable, Equatable {
        public var uuid: BluetoothUUID
        /// `Flags`: "read", "write", "encrypt-read", ... (``GATTApplication/descriptorFlags``).
        public var flags: [String]
        /// At most 512 bytes.
        public var value: [UInt8]

        public init(uuid: BluetoothUUID, flags: [String] = ["read"], value: [UInt8] = []) {
            self.uuid = uuid
            self.flags = flags
            self.value = value
        }
    }

    public var services: [Service]

    public init(services: [Service]) {
        self.services = services
    }

    /// The characteristic Flags bluetoothd 5.66 accepts (src/gatt-database.c
    /// parse_chrc_flags); another makes RegisterApplication fail.
    public static let characteristicFlags: Set<String> = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
        "encrypt-read", "encrypt-write", "encrypt-notify", "encrypt-indicate",
        "encrypt-authenticated-read", "encrypt-authenticated-write", "encrypt-authenticated-notify",
        "encrypt-authenticated-indicate", "secure-read", "secure-write", "secure-notify", "secure-indicate", "authorize",
    ]

    /// The descriptor Flags bluetoothd 5.66 accepts (parse_desc_flags).
    public static let descriptorFlags: Set<String> = [
        "read", "write", "encrypt-read", "encrypt-write", "encrypt-authenticated-read",
        "encrypt-authenticated-write", "secure-read", "secure-write", "authorize",
    ]

    /// The longest attribute value, in bytes (Core Specification Vol 3 Part F 3.2.9).
    public static let maximumValueLength = 512

    /// The services bluetoothd serves itself (GAP 0x1800, GATT 0x1801): an application
    /// with one of them fails to register ("Failed to create entry in database").
    public static let reservedServices: Set<BluetoothUUID> = [.genericAccess, .genericAttribute]

    /// The descriptors bluetoothd makes itself for a characteristic (0x2900 Extended
    /// Properties, 0x2902 Client Characteristic Configuration).
    public static let reservedDescriptors: Set<BluetoothUUID> = [
        BluetoothUUID(uuid16: 0x2900), .clientCharacteristicConfiguration,
    ]
}

/// One attribute of a registered application: where its object is and what it is.
public struct GATTAttribute: Sendable, Hashable, CustomStringConvertible {
    /// The exported object's path: `ROOT/serviceN/charM`, `…/descK`, counting from 0 in the
    /// application's order.
    public let path: ObjectPath
    public let service: BluetoothUUID
    public let characteristic: BluetoothUUID
    /// The descriptor, for a descriptor's attribute; nil for a characteristic's.
    public let descriptor: BluetoothUUID?
    /// Its position: service, characteristic, descriptor (nil for a characteristic).
    public let index: (service: Int, characteristic: Int, descriptor: Int?)

    public static func == (lhs: GATTAttribute, rhs: GATTAttribute) -> Bool { lhs.path == rhs.path }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    /// `descriptor 2901 of characteristic 2a19 in service 180f`, UUIDs with their SIG names.
    public var description: String {
        String(BLEOperation(.serve, service: service, characteristic: characteristic, descriptor: descriptor).place.dropFirst(4))
    }
}

extension GATTApplication {
    /// Why an application, or a value for it, cannot be served; nothing was sent.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// The attribute concerned: `service 180f`, `characteristic 2a19 in service 180f`, ...
        public var attribute: String
        public var reason: String

        public init(attribute: String, reason: String) {
            self.attribute = attribute
            self.reason = reason
        }

        public var description: String { attribute.isEmpty ? reason : "\(attribute): \(reason)" }
    }

    /// Checks what bluetoothd 5.66 would refuse (src/gatt-database.c), so that nothing is
    /// registered: at least one service; no service bluetoothd serves itself
    /// (``reservedServices``) and no descriptor it makes itself (``reservedDescriptors``);
    /// every characteristic with at least one flag, all of ``characteristicFlags``; every
    /// descriptor's flags of ``descriptorFlags``; no value over ``maximumValueLength``.
    /// - Throws: ``Invalid`` naming the first attribute at fault.
    public func validate() throws(Invalid) {
        guard !services.isEmpty else { throw Invalid(attribute: "", reason: "no service: an application needs at least one") }
        for service in services {
            let named = "service \(service.uuid.named)"
            if Self.reservedServices.contains(service.uuid) {
                throw Invalid(attribute: named, reason: "bluetoothd serves this service itself")
            }
            for characteristic in service.characteristics {
                let place = "characteristic \(characteristic.uuid.named) in \(named)"
                try Self.check(flags: characteristic.flags, allowed: Self.characteristicFlags, of: place)
                try Self.check(value: characteristic.value, of: place)
                for descriptor in characteristic.descriptors {
                    let descriptorPlace = "descriptor \(descriptor.uuid.named) of \(place)"
                    if Self.reservedDescriptors.contains(descriptor.uuid) {
                        throw Invalid(attribute: descriptorPlace, reason: "bluetoothd makes this descriptor itself")
                    }
                    try Self.check(flags: descriptor.flags, allowed: Self.descriptorFlags, of: descriptorPlace)
                    try Self.check(value: descriptor.value, of: descriptorPlace)
                }
            }
        }
    }

    private static func check(flags: [String], allowed: Set<String>, of place: String) throws(Invalid) {
        guard !flags.isEmpty else { throw Invalid(attribute: place, reason: "no flags: at least one is needed") }
        if let unknown = flags.first(where: { !allowed.contains($0) }) {
            throw Invalid(attribute: place, reason: "unknown flag \"\(unknown)\"")
        }
    }

    private static func check(value: [UInt8], of place: String) throws(Invalid) {
        guard value.count <= maximumValueLength else {
            throw Invalid(attribute: place, reason: "a value of \(value.count) bytes: at most \(maximumValueLength)")
        }
    }
}
