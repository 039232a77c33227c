import DBusKit

/// A GATT descriptor, org.bluez.GattDescriptor1 (bluez/doc/org.bluez.GattDescriptor.rst).
public struct GATTDescriptor: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: BluetoothUUID
    /// The UUID of the characteristic it belongs to.
    public var characteristic: BluetoothUUID
    /// The UUID of that characteristic's service.
    public var service: BluetoothUUID
}

/// A GATT characteristic, org.bluez.GattCharacteristic1 (bluez/doc/org.bluez.GattCharacteristic.rst).
public struct GATTCharacteristic: Sendable, Equatable {
    public var path: ObjectPath
    public var uuid: BluetoothUUID
    /// The UUID of the service it belongs to.
    public var service: BluetoothUUID
    /// BlueZ's Flags: "read", "write", "write-without-response", "notify", "indicate", ...
    public var flags: [String]
    public var descriptors: [GATTDescriptor]
}

/// A GATT service, org.bluez.GattService1 (bluez/doc/org.bluez.GattService.rst).
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
            return service["UUID"]?.string.flatMap { BluetoothUUID($0) } == uuid
        }
    }

    /// The GATT tree under a device, services and characteristics sorted by object path
    /// (which follows the attribute handles). Objects with a malformed UUID are skipped.
    public func gattServices(of device: ObjectPath) -> [GATTService] {
        var services = [GATTService]()
        for servicePath in paths(with: BlueZ.gattServiceInterface, under: device) {
            guard let properties = self[servicePath, BlueZ.gattServiceInterface],
                  let uuid = properties["UUID"]?.string.flatMap({ BluetoothUUID($0) }) else { continue }
            let characteristics = paths(with: BlueZ.gattCharacteristicInterface, under: servicePath).compactMap { charPath -> GATTCharacteristic? in
                guard let c = self[charPath, BlueZ.gattCharacteristicInterface],
                      let charUUID = c["UUID"]?.string.flatMap({ BluetoothUUID($0) }) else { return nil }
                let descriptors = paths(with: BlueZ.gattDescriptorInterface, under: charPath).compactMap { descPath -> GATTDescriptor? in
                    guard let d = self[descPath, BlueZ.gattDescriptorInterface]?["UUID"]?.string.flatMap({ BluetoothUUID($0) }) else { return nil }
                    return GATTDescriptor(path: descPath, uuid: d, characteristic: charUUID, service: uuid)
                }
                return GATTCharacteristic(path: charPath, uuid: charUUID, service: uuid,
                                          flags: c["Flags"]?.stringArray ?? [], descriptors: descriptors)
            }
            services.append(GATTService(path: servicePath, uuid: uuid, primary: properties["Primary"]?.bool ?? true,
                                        characteristics: characteristics))
        }
        return services
    }
}
