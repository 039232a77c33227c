import DBusKit

/// A GATT descriptor, org.bluez.GattDescriptor1 (bluez/doc/org.bluez.GattDescriptor.rst,
/// read through ``GATTDescriptorProperties``).
public struct GATTDescriptor: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: BluetoothUUID
    /// The UUID of the characteristic it belongs to.
    public var characteristic: BluetoothUUID
    /// The UUID of that characteristic's service.
    public var service: BluetoothUUID
}

/// A GATT characteristic, org.bluez.GattCharacteristic1
/// (bluez/doc/org.bluez.GattCharacteristic.rst, read through ``GATTCharacteristicProperties``).
public struct GATTCharacteristic: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: BluetoothUUID
    /// The UUID of the service it belongs to.
    public var service: BluetoothUUID
    /// BlueZ's Flags: "read", "write", "write-without-response", "notify", "indicate", ...
    public var flags: [String]
    public var descriptors: [GATTDescriptor]
}

/// A GATT service, org.bluez.GattService1 (bluez/doc/org.bluez.GattService.rst, read
/// through ``GATTServiceProperties``).
public struct GATTService: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: BluetoothUUID
    public var primary: Bool
    public var characteristics: [GATTCharacteristic]

    /// The characteristic with `uuid`, if the service has it.
    public func characteristic(_ uuid: BluetoothUUID) -> GATTCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }
}

extension GATTCharacteristic {
    /// The Flags that allow reading the value (bluez/doc/org.bluez.GattCharacteristic.rst):
    /// `read`, and the ones that ask for security first, `encrypt-read`,
    /// `encrypt-authenticated-read` and `secure-read`. bluetoothd exports only `read` for a
    /// remote device's characteristic (gatt-client.c takes Flags from the declaration's
    /// properties); the others are a local GATT application's.
    public static let readFlags = ["read", "encrypt-read", "encrypt-authenticated-read", "secure-read"]

    /// Whether the flags allow reading the value (one of ``readFlags``).
    public var isReadable: Bool {
        flags.contains(where: Self.readFlags.contains)
    }

    /// The descriptor with `uuid`, if the characteristic has it (the first, by handle).
    public func descriptor(_ uuid: BluetoothUUID) -> GATTDescriptor? {
        descriptors.first { $0.uuid == uuid }
    }
}

extension ObjectCache {
    /// How many objects (GATT services, characteristics, descriptors) are under `device`.
    public func gattObjectCount(under device: ObjectPath) -> Int {
        objects.keys.reduce(0) { $0 + ($1 != device && $1.isDescendant(ofOrEqualTo: device) ? 1 : 0) }
    }

    /// Whether a GattService1 with `uuid` is exported under `device`.
    public func hasGATTService(_ uuid: BluetoothUUID, under device: ObjectPath) -> Bool {
        objects.contains { path, interfaces in
            guard let service = interfaces[BlueZ.gattServiceInterface], path.isDescendant(ofOrEqualTo: device) else { return false }
            return GATTServiceProperties(service).uuid == uuid
        }
    }

    /// The GATT tree under a device, services and characteristics sorted by object path
    /// (which follows the attribute handles). Objects with a malformed UUID are skipped.
    public func gattServices(of device: ObjectPath) -> [GATTService] {
        paths(with: BlueZ.gattServiceInterface, under: device).compactMap { servicePath in
            guard let service = self[servicePath, BlueZ.gattServiceInterface].map(GATTServiceProperties.init),
                  let uuid = service.uuid else { return nil }
            let characteristics = paths(with: BlueZ.gattCharacteristicInterface, under: servicePath).compactMap { charPath -> GATTCharacteristic? in
                guard let characteristic = self[charPath, BlueZ.gattCharacteristicInterface].map(GATTCharacteristicProperties.init),
                      let charUUID = characteristic.uuid else { return nil }
                let descriptors = paths(with: BlueZ.gattDescriptorInterface, under: charPath).compactMap { descPath -> GATTDescriptor? in
                    guard let descUUID = self[descPath, BlueZ.gattDescriptorInterface].flatMap({ GATTDescriptorProperties($0).uuid }) else { return nil }
                    return GATTDescriptor(path: descPath, uuid: descUUID, characteristic: charUUID, service: uuid)
                }
                return GATTCharacteristic(path: charPath, uuid: charUUID, service: uuid, flags: characteristic.flags ?? [],
                                          descriptors: descriptors)
            }
            // BlueZ always sends Primary; a service without it counts as primary.
            return GATTService(path: servicePath, uuid: uuid, primary: service.primary ?? true, characteristics: characteristics)
        }
    }
}
