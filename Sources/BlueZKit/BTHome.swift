/// A BTHome v2 advertisement, decoded from the service data of UUID 0xFCD2
/// (the BTHome v2 format, bthome.io/format): a device information byte, then measurement,
/// binary-sensor, event and device-information objects, each an object id and its data.
///
/// An encrypted frame (bit 0 of the device information) is decrypted with the device's bind
/// key (``decode(serviceData:address:bindKey:)``, in `BTHome+Encryption.swift`); without one
/// it is ``AdvertisedFormat/undecodable(_:)``. Every object id the format defines is known (the
/// table in `BTHome+Objects.swift` is generated from the PyPI package bthome-ble, the decoder
/// Home Assistant uses: `make bthome-objects`), each with its length, signedness, factor and unit.
public struct BTHome: Sendable, Equatable {
    /// The service data UUID of BTHome v2 (0xFCD2, assigned to Allterco Robotics).
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFCD2)

    /// The BTHome version, bits 5-7 of the device information byte (always 2 here).
    public var version: Int
    /// Bit 2 of the device information byte: the device advertises at irregular intervals,
    /// when something happens (a button), rather than regularly.
    public var triggerBased: Bool
    /// The objects, in the order sent (ids may repeat: two temperatures are two objects).
    public var objects: [Object]
    /// Bit 0 of the device information byte: the objects came encrypted, and were decrypted
    /// with the device's bind key (bthome.io/encryption).
    public var encrypted: Bool = false
    /// An encrypted frame's counter, the 4 bytes before its MIC read little-endian (the
    /// device increases it with every advertisement); nil for an unencrypted frame.
    public var counter: UInt32? = nil

    /// One object of the frame.
    public struct Object: Sendable, Equatable {
        /// The object id (`0x02` temperature).
        public var id: UInt8
        /// The quantity's name, as bthome-ble names it (its Home Assistant device class):
        /// `temperature`, `humidity`, `opening`, `button`, `firmware_version`.
        public var name: String
        /// The unit of ``value``'s number (`°C`, `%`, `kWh`), nil for none.
        public var unit: String?
        public var value: Value
    }

    /// The value of an object.
    public enum Value: Sendable, Equatable {
        /// A whole number: a count, a packet id, a quantity whose factor is 1 (`battery`, `%`).
        case integer(Int)
        /// The raw integer times the object's factor, as the nearest Double to that exact
        /// decimal (`0x02` 0x0866 → 21.5).
        case number(Double)
        /// A binary sensor: false for 0, true otherwise (`opening`: true is open).
        case bool(Bool)
        /// A text object (`0x53`), UTF-8.
        case text(String)
        /// A raw object (`0x54`), or a command's manufacturer-specific arguments.
        case bytes([UInt8])
        /// A timestamp object (`0x50`): seconds since the Unix epoch (UTC).
        case timestamp(UInt32)
        /// A firmware version (`0xF1`, `0xF2`): `4.2.1.0`, most significant part first.
        case version(String)
        /// An event (button, dimmer, command): its name, nil for the format's "none";
        /// `steps` for a dimmer's rotation, `arguments` for a command's.
        case event(String?, steps: Int? = nil, arguments: [UInt8]? = nil)
    }

    /// How the format lays out an object id's data (generated table: ``objectTypes``).
    struct ObjectType: Sendable {
        /// value = raw integer × mantissa / 10^places (0.35 is 35 / 10^2).
        struct Factor: Sendable, Equatable {
            let mantissa: Int
            let places: Int
            static let one = Factor(mantissa: 1, places: 0)
        }

        enum Encoding: Sendable {
            case unsigned(length: Int, factor: Factor)
            case signed(length: Int, factor: Factor)
            case binary
            case timestamp
            case text
            case raw
            case buttonEvent
            case dimmerEvent
            case command
            case firmwareVersion(length: Int)
        }

        let id: UInt8
        let name: String
        let unit: String?
        let encoding: Encoding
    }

    /// The object types by id (nil where the format defines none).
    static let types: [ObjectType?] = {
        var types = [ObjectType?](repeating: nil, count: 256)
        for type in objectTypes { types[Int(type.id)] = type }
        return types
    }()

    /// Decodes the service data of UUID 0xFCD2.
    ///
    /// - Returns: the frame, or ``AdvertisedFormat/undecodable(_:)`` with the reason when it
    ///   is empty, encrypted (`"encrypted (no bind key)"`), of another version, has an object id the format does not
    ///   define, an object cut short, or an event id, text or length the format does not
    ///   allow. Nothing is guessed: one object that cannot be read makes the frame undecodable.
    public static func decode(serviceData data: [UInt8]) -> AdvertisedFormat<BTHome> {
        guard let info = data.first else { return .undecodable("empty service data") }
        if info & 0x01 != 0 { return .undecodable("encrypted (no bind key)") }
        return decodeObjects(data)
    }

    /// The frame whose device information is `data[0]` and whose objects follow it, in the
    /// clear (as sent, or decrypted); byte positions in reasons count from the device information.
    static func decodeObjects(_ data: [UInt8]) -> AdvertisedFormat<BTHome> {
        guard let info = data.first else { return .undecodable("empty service data") }
        let version = Int(info >> 5)
        guard version == 2 else { return .undecodable("BTHome version \(version)") }
        var objects: [Object] = []
        var at = 1
        while at < data.count {
            let id = data[at]
            guard let type = types[Int(id)] else {
                return .undecodable("object id \(hex(id)) at byte \(at) is not in the BTHome v2 format")
            }
            switch decodeObject(type, data, from: at + 1) {
            case .decoded(let (object, next)):
                objects.append(object)
                at = next
            case .undecodable(let reason):
                return .undecodable("object \(hex(id)) (\(type.name)) at byte \(at): \(reason)")
            }
        }
        return .decoded(BTHome(version: version, triggerBased: info & 0x04 != 0, objects: objects))
    }

    /// The object of `type` whose data starts at `start`, and the index after it.
    private static func decodeObject(_ type: ObjectType, _ data: [UInt8], from start: Int) -> AdvertisedFormat<(Object, Int)> {
        func fixed(_ length: Int, _ make: (ArraySlice<UInt8>) -> AdvertisedFormat<Value>) -> AdvertisedFormat<(Object, Int)> {
            guard start + length <= data.count else { return .undecodable("\(length) bytes needed, \(data.count - start) left") }
            switch make(data[start..<start + length]) {
            case .decoded(let value):
                return .decoded((Object(id: type.id, name: type.name, unit: type.unit, value: value), start + length))
            case .undecodable(let reason):
                return .undecodable(reason)
            }
        }
        /// A length byte, then that many bytes (text, raw).
        func sized(_ make: (ArraySlice<UInt8>) -> AdvertisedFormat<Value>) -> AdvertisedFormat<(Object, Int)> {
            guard start < data.count else { return .undecodable("no length byte") }
            let length = Int(data[start])
            guard start + 1 + length <= data.count else { return .undecodable("\(length) bytes announced, \(data.count - start - 1) left") }
            switch make(data[start + 1..<start + 1 + length]) {
            case .decoded(let value):
                return .decoded((Object(id: type.id, name: type.name, unit: type.unit, value: value), start + 1 + length))
            case .undecodable(let reason):
                return .undecodable(reason)
            }
        }
        switch type.encoding {
        case .unsigned(let length, let factor):
            return fixed(length) { .decoded(number(littleEndian($0, signed: false), factor)) }
        case .signed(let length, let factor):
            return fixed(length) { .decoded(number(littleEndian($0, signed: true), factor)) }
        case .binary:
            return fixed(1) { .decoded(.bool($0.first! != 0)) }
        case .timestamp:
            return fixed(4) { .decoded(.timestamp(UInt32(littleEndian($0, signed: false)))) }
        case .firmwareVersion(let length):
            return fixed(length) { .decoded(.version($0.reversed().map(String.init).joined(separator: "."))) }
        case .buttonEvent:
            return fixed(1) { event($0.first!, in: buttonEvents).map { .event($0) } }
        case .dimmerEvent:
            return fixed(2) { bytes in event(bytes.first!, in: dimmerEvents).map { .event($0, steps: Int(bytes.last!)) } }
        case .command:
            // A length byte whose low 5 bits count the arguments after the command id.
            guard start < data.count else { return .undecodable("no length byte") }
            let arguments = Int(data[start] & 0x1F)
            guard start + 2 + arguments <= data.count else {
                return .undecodable("\(1 + arguments) bytes announced, \(data.count - start - 1) left")
            }
            let bytes = data[start + 1..<start + 2 + arguments]
            switch event(bytes.first!, in: commandEvents) {
            case .decoded(let name):
                let value = Value.event(name, arguments: Array(bytes.dropFirst()))
                return .decoded((Object(id: type.id, name: type.name, unit: type.unit, value: value), start + 2 + arguments))
            case .undecodable(let reason):
                return .undecodable(reason)
            }
        case .text:
            return sized { bytes in
                guard let text = String(validating: bytes, as: UTF8.self) else { return .undecodable("text is not UTF-8") }
                return .decoded(.text(text))
            }
        case .raw:
            return sized { .decoded(.bytes(Array($0))) }
        }
    }

    private static func event(_ id: UInt8, in names: [UInt8: String?]) -> AdvertisedFormat<String?> {
        guard let name = names[id] else { return .undecodable("event id \(hex(id)) is not in the BTHome v2 format") }
        return .decoded(name)
    }

    /// The bytes as a little-endian integer (at most 4 bytes in the format).
    private static func littleEndian(_ bytes: ArraySlice<UInt8>, signed: Bool) -> Int {
        var value = 0
        for byte in bytes.reversed() { value = value << 8 | Int(byte) }
        let bits = bytes.count * 8
        if signed, bytes.count > 0, value & (1 << (bits - 1)) != 0 { value -= 1 << bits }
        return value
    }

    /// The raw value times the factor: an integer when the factor is 1, else the Double
    /// nearest the exact decimal (an integer division of exact values, correctly rounded).
    private static func number(_ raw: Int, _ factor: ObjectType.Factor) -> Value {
        if factor == .one { return .integer(raw) }
        var scale = 1.0
        for _ in 0..<factor.places { scale *= 10 }
        return .number(Double(raw * factor.mantissa) / scale)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return "0x" + (digits.count == 1 ? "0" : "") + digits
    }
}
