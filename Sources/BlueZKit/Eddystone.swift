/// An Eddystone frame, decoded from the service data of UUID 0xFEAA (Google's Eddystone
/// protocol specification, github.com/google/eddystone: `protocol-specification.md`,
/// `eddystone-uid`, `eddystone-url`, `eddystone-tlm/tlm-plain.md`). Multi-byte fields are
/// big-endian, as the specification sends them.
public enum Eddystone: Sendable, Equatable {
    /// Frame type 0x00: a beacon's identity.
    case uid(UID)
    /// Frame type 0x10: a compressed URL.
    case url(URL)
    /// Frame type 0x20, version 0x00: unencrypted telemetry.
    case tlm(TLM)

    /// The service data UUID of Eddystone (0xFEAA, assigned to Google).
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFEAA)

    public struct UID: Sendable, Equatable {
        /// Ranging data: the TX power in dBm measured at 0 m (signed).
        public var rangingData: Int8
        /// The 10-byte namespace.
        public var namespace: [UInt8]
        /// The 6-byte instance.
        public var instance: [UInt8]
    }

    public struct URL: Sendable, Equatable {
        /// TX power in dBm measured at 0 m (signed).
        public var txPower: Int8
        /// The URL, its scheme prefix and expansion codes expanded (`https://example.com/`).
        public var url: String
    }

    public struct TLM: Sendable, Equatable {
        /// The TLM version: 0x00 (unencrypted) is the only one decoded.
        public var version: UInt8
        /// VBATT: the battery voltage in mV, 1 mV a bit; 0 when the beacon does not measure it.
        public var batteryVoltage: UInt16
        /// TEMP: the beacon's temperature in °C (8.8 fixed point, 1/256 °C); nil when the
        /// beacon sends 0x8000, "not supported".
        public var temperature: Double?
        /// ADV_CNT: advertising PDUs sent since power-on or reboot.
        public var advertisingCount: UInt32
        /// SEC_CNT: time since power-on or reboot, in units of 0.1 s.
        public var secondsCount: UInt32
    }

    /// Decodes the service data of UUID 0xFEAA.
    ///
    /// - Returns: the frame, or ``AdvertisedFormat/undecodable(_:)`` with the reason: empty
    ///   data, a frame cut short or too long, an EID frame (0x30), an encrypted TLM (version
    ///   0x01), a frame type the specification does not define, a URL scheme or URL byte it
    ///   reserves.
    public static func decode(serviceData data: [UInt8]) -> AdvertisedFormat<Eddystone> {
        guard let frameType = data.first else { return .undecodable("empty service data") }
        switch frameType {
        case 0x00:
            // 18 bytes; the specification adds 2 reserved bytes (0x00) that many beacons omit.
            guard data.count == 18 || data.count == 20 else { return .undecodable("UID frame of \(data.count) bytes, 18 or 20 expected") }
            return .decoded(.uid(UID(rangingData: Int8(bitPattern: data[1]), namespace: Array(data[2..<12]), instance: Array(data[12..<18]))))
        case 0x10:
            guard data.count >= 3 else { return .undecodable("URL frame of \(data.count) bytes, 3 at least") }
            guard data.count <= 20 else { return .undecodable("URL frame of \(data.count) bytes, 20 at most") }
            guard Int(data[2]) < schemes.count else { return .undecodable("URL scheme prefix 0x\(hex(data[2])) is reserved") }
            var url = schemes[Int(data[2])]
            for byte in data[3...] {
                if Int(byte) < expansions.count {
                    url += expansions[Int(byte)]
                } else if (0x21...0x7E).contains(byte) {
                    url.append(Character(Unicode.Scalar(byte)))
                } else {
                    return .undecodable("URL byte 0x\(hex(byte)) is reserved")
                }
            }
            return .decoded(.url(URL(txPower: Int8(bitPattern: data[1]), url: url)))
        case 0x20:
            guard data.count >= 2 else { return .undecodable("TLM frame of \(data.count) bytes, 14 expected") }
            guard data[1] == 0x00 else {
                return .undecodable(data[1] == 0x01 ? "encrypted TLM (eTLM)" : "TLM version 0x\(hex(data[1]))")
            }
            guard data.count == 14 else { return .undecodable("TLM frame of \(data.count) bytes, 14 expected") }
            let temperature = Int16(bitPattern: UInt16(data[4]) << 8 | UInt16(data[5]))
            return .decoded(.tlm(TLM(version: 0, batteryVoltage: UInt16(data[2]) << 8 | UInt16(data[3]),
                                     temperature: temperature == Int16.min ? nil : Double(temperature) / 256,
                                     advertisingCount: bigEndian(data[6..<10]), secondsCount: bigEndian(data[10..<14]))))
        case 0x30:
            return .undecodable("EID frame (ephemeral identifier, resolved only by its registrar)")
        default:
            return .undecodable("frame type 0x\(hex(frameType)) is not in the Eddystone specification")
        }
    }

    /// The URL scheme prefixes, by code (Eddystone-URL, "URL Scheme Prefix").
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    /// The expansions of bytes 0x00-0x0D in the encoded URL (Eddystone-URL, "HTTP URL encoding").
    static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                             ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func hex(_ byte: UInt8) -> String {
        (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
    }
}
