/// The beacon formats found in what a device advertises, each decoded: iBeacon in Apple's
/// manufacturer data (``IBeacon``), Eddystone in the service data of 0xFEAA (``Eddystone``),
/// BTHome v2 in the service data of 0xFCD2 (``BTHome``). A format the data does not carry is
/// nil; one it carries but that cannot be decoded is ``AdvertisedFormat/undecodable(_:)``.
public struct AdvertisedFormats: Sendable, Equatable {
    public var iBeacon: AdvertisedFormat<IBeacon>?
    public var eddystone: AdvertisedFormat<Eddystone>?
    public var bthome: AdvertisedFormat<BTHome>?

    /// The formats' names as blectl's records and `scan --decoded` name them.
    public enum Name: String, Sendable, CaseIterable {
        case iBeacon = "ibeacon"
        case eddystone
        case bthome
    }

    /// Decodes Device1.ManufacturerData and Device1.ServiceData (bluez/doc/org.bluez.Device.rst).
    ///
    /// - Parameters:
    ///   - address: the device's address (Device1.Address), which an encrypted BTHome frame
    ///     needs to be decrypted; nil when unknown.
    ///   - bthomeBindKey: the device's BTHome bind key, nil when none is known (an encrypted
    ///     BTHome frame is then undecodable, `"encrypted (no bind key)"`).
    public init(manufacturerData: [UInt16: [UInt8]], serviceData: [BluetoothUUID: [UInt8]],
                address: BluetoothAddress? = nil, bthomeBindKey: BTHomeBindKey? = nil) {
        if let apple = manufacturerData[IBeacon.companyIdentifier] { iBeacon = IBeacon.decode(manufacturerData: apple) }
        if !serviceData.isEmpty {
            if let data = serviceData[Eddystone.serviceUUID] { eddystone = Eddystone.decode(serviceData: data) }
            if let data = serviceData[BTHome.serviceUUID] {
                bthome = if let address { BTHome.decode(serviceData: data, address: address, bindKey: bthomeBindKey) }
                    else { BTHome.decode(serviceData: data) }
            }
        }
    }

    /// True when no format was found.
    public var isEmpty: Bool { iBeacon == nil && eddystone == nil && bthome == nil }

    /// Whether the data carries the format `name`, decodable or not.
    public func contains(_ name: Name) -> Bool {
        switch name {
        case .iBeacon: iBeacon != nil
        case .eddystone: eddystone != nil
        case .bthome: bthome != nil
        }
    }
}

extension DeviceProperties {
    /// The beacon formats of Device1.ManufacturerData and Device1.ServiceData, decoded
    /// (empty when the device advertises neither).
    public var advertisedFormats: AdvertisedFormats {
        AdvertisedFormats(manufacturerData: manufacturerData ?? [:], serviceData: serviceData ?? [:])
    }

    /// The beacon formats, an encrypted BTHome frame decrypted with the key of this device's
    /// address in `bthomeBindKeys` (bthome.io/encryption; see ``BTHome/decode(serviceData:address:bindKey:)``).
    public func advertisedFormats(bthomeBindKeys: [BluetoothAddress: BTHomeBindKey]) -> AdvertisedFormats {
        AdvertisedFormats(manufacturerData: manufacturerData ?? [:], serviceData: serviceData ?? [:], address: address,
                          bthomeBindKey: address.flatMap { bthomeBindKeys[$0] })
    }
}
