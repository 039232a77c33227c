import BlueZKit

/// How the GATT toolbox commands name an attribute: a characteristic UUID, with `--service`
/// to choose when the UUID occurs in several services (without it blectl refuses to guess:
/// exit 64 with the services listed). `read`, `write` and `notify` take it as an option group.
struct GATTTarget: ParsableArguments, Equatable {
    @Argument("characteristic", help: "The characteristic's UUID: 16-bit (2a19), 32-bit or 128-bit.", parser: .uuid)
    var characteristic: BluetoothUUID

    @Option("service", short: "s", valueName: "uuid",
            help: "The service the characteristic is in, when its UUID occurs in several services.",
            parser: .uuid)
    var service: BluetoothUUID?

    init() {}

    init(characteristic: BluetoothUUID, service: BluetoothUUID? = nil) {
        self.characteristic = characteristic
        self.service = service
    }

    /// The one characteristic named, in the device's complete GATT tree (a tree that changes
    /// meanwhile, a Service Changed, is waited for: ``ConnectedDevice/characteristics(_:inService:timeout:)``).
    /// - Throws: ``BLEError/notSupported(_:_:)`` when there is none, ``AmbiguousAttribute``
    ///   when the UUID is in several services and `--service` does not choose, the errors of
    ///   ``ConnectedDevice/characteristics(_:inService:timeout:)``.
    func resolve(on device: ConnectedDevice, timeout: Duration) async throws -> GATTCharacteristic {
        try Self.resolve(characteristic, service: service, on: device,
                         matches: try await device.characteristics(characteristic, inService: service, timeout: timeout))
    }

    static func resolve(_ uuid: BluetoothUUID, service: BluetoothUUID?, on device: ConnectedDevice,
                        in services: [GATTService]) throws -> GATTCharacteristic {
        let matches = services.filter { service == nil || $0.uuid == service }.flatMap { $0.characteristics.filter { $0.uuid == uuid } }
        return try resolve(uuid, service: service, on: device, matches: matches)
    }

    private static func resolve(_ uuid: BluetoothUUID, service: BluetoothUUID?, on device: ConnectedDevice,
                                matches: [GATTCharacteristic]) throws -> GATTCharacteristic {
        switch matches.count {
        case 1:
            return matches[0]
        case 0:
            let operation = BLEOperation(.serviceLookup, address: device.device.address, service: service, characteristic: uuid)
            let place = service.map { "in service \(Records.named($0)) " } ?? ""
            throw BLEError.notSupported(operation, "no characteristic \(Records.named(uuid)) \(place)on \(device.device.address)")
        default:
            throw AmbiguousAttribute(characteristic: uuid, services: matches.map(\.service), address: device.device.address)
        }
    }
}

extension GATTCharacteristic {
    /// Its descriptor `uuid` (the first, by handle, should there be several).
    /// - Throws: ``BLEError/notSupported(_:_:)`` (service lookup, naming the characteristic
    ///   and its service) when it has none.
    func requireDescriptor(_ uuid: BluetoothUUID, on device: ConnectedDevice) throws -> GATTDescriptor {
        guard let found = descriptor(uuid) else {
            let operation = BLEOperation(.serviceLookup, address: device.device.address, service: service, characteristic: self.uuid,
                                         descriptor: uuid)
            throw BLEError.notSupported(operation, "no descriptor \(Records.named(uuid)) on characteristic \(Records.named(self.uuid)) "
                                        + "in service \(Records.named(service)) on \(device.device.address)")
        }
        return found
    }
}

/// A characteristic UUID found in several services with no `--service` to choose: blectl
/// does not guess (exit 64, the services listed).
struct AmbiguousAttribute: CommandError {
    var characteristic: BluetoothUUID
    var services: [BluetoothUUID]
    var address: BluetoothAddress
    var status: ExitStatus { .usage }
    var operation: BLEOperation? { BLEOperation(.serviceLookup, address: address, characteristic: characteristic) }

    var description: String {
        let list = services.map { Records.named($0) }.joined(separator: ", ")
        return "characteristic \(Records.named(characteristic)) is in several services on \(address) (\(list)): choose one with --service"
    }
}
