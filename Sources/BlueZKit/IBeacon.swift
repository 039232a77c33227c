/// An iBeacon advertisement, decoded from Apple's manufacturer data (company identifier
/// 0x004C) that starts with type 0x02 and length 0x15 (Apple, "Proximity Beacon
/// Specification", release R1): a proximity UUID, major, minor and measured power.
public struct IBeacon: Sendable, Equatable {
    /// Apple's company identifier, the manufacturer data key an iBeacon uses.
    public static let companyIdentifier: UInt16 = 0x004C

    /// Proximity UUID: who deployed the beacons (16 bytes, big-endian as sent).
    public var proximityUUID: BluetoothUUID
    /// Major: a group of beacons, 0-65535.
    public var major: UInt16
    /// Minor: one beacon of the group, 0-65535.
    public var minor: UInt16
    /// Measured power: the RSSI in dBm expected at 1 m from the beacon (signed).
    public var measuredPower: Int8

    /// Decodes Apple's manufacturer data (the bytes after the company identifier).
    ///
    /// - Returns: nil when the data is not an iBeacon (it does not start with 0x02 0x15:
    ///   another of Apple's frames); the frame from its first 23 bytes (what follows is
    ///   another of Apple's frames, ignored); ``AdvertisedFormat/undecodable(_:)`` when fewer
    ///   than 23 bytes are there.
    public static func decode(manufacturerData data: [UInt8]) -> AdvertisedFormat<IBeacon>? {
        guard data.count >= 2, data[0] == 0x02, data[1] == 0x15 else { return nil }
        guard data.count >= 23 else { return .undecodable("\(data.count) bytes, 23 needed") }
        return .decoded(IBeacon(proximityUUID: uuid(data[2..<18]),
                                major: UInt16(data[18]) << 8 | UInt16(data[19]),
                                minor: UInt16(data[20]) << 8 | UInt16(data[21]),
                                measuredPower: Int8(bitPattern: data[22])))
    }

    /// 16 bytes as a 128-bit UUID, `8-4-4-4-12` lowercase hex.
    private static func uuid(_ bytes: ArraySlice<UInt8>) -> BluetoothUUID {
        var text = ""
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { text += "-" }
            if byte < 0x10 { text += "0" }
            text += String(byte, radix: 16)
        }
        return BluetoothUUID(text)!
    }
}
