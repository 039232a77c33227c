import BlueZKit

/// The argument and option shared by every subcommand that talks to one device:
/// `<address>` and `--timeout` (the limit for the whole command, connecting included).
struct DeviceOptions: Sendable, Equatable {
    /// How long the whole operation may take when `--timeout` is not given: 20 s.
    static let defaultTimeout = Duration.seconds(20)

    static let addressArgument = Argument<BluetoothAddress>(
        "address", help: "The device's address, like C0:FF:EE:00:00:01.", parser: .address
    )
    static let timeoutOption = Option.timeout(
        default: DeviceOptions.defaultTimeout,
        help: "Give up after this many seconds, connecting included; decimals allowed, more than 0.",
        parser: .seconds(allowingZero: false)
    )

    /// `<address>`: the device.
    var address: BluetoothAddress
    /// `--timeout`: how long the whole operation may take, connecting included,
    /// more than 0, up to 86400 s (0 is a usage error: nothing could be done in it).
    var timeout: Duration

    init(address: BluetoothAddress, timeout: Duration = DeviceOptions.defaultTimeout) {
        self.address = address
        self.timeout = timeout
    }

    init(from values: ParsedValues) throws(UsageError) {
        self.init(address: try values.requiredValue(of: Self.addressArgument), timeout: try values.requiredValue(of: Self.timeoutOption))
    }
}

/// `--vendor-service`, `--vendor-write` and `--vendor-notify` (all three or none): the
/// library's description of a vendor request/response protocol.
typealias VendorProtocolOptions = VendorProtocol

/// The declarations of the vendor protocol's three options.
enum VendorOptions {
    static let service = Option<BluetoothUUID>(
        "vendor-service", valueName: "uuid",
        help: "Ask through a vendor protocol in this GATT service instead. Needs --vendor-write and --vendor-notify.",
        parser: .uuid
    )
    static let write = Option<BluetoothUUID>(
        "vendor-write", valueName: "uuid",
        help: "The vendor protocol's characteristic that requests are written to.",
        parser: .uuid
    )
    static let notify = Option<BluetoothUUID>(
        "vendor-notify", valueName: "uuid",
        help: "The vendor protocol's characteristic whose notifications carry the answers.",
        parser: .uuid
    )
    static let specs = [service.spec, write.spec, notify.spec]

    /// `nil` when none of the three was given (the parser has already rejected one or two).
    static func options(from values: ParsedValues) throws(UsageError) -> VendorProtocolOptions? {
        guard let service = try values.value(of: service),
              let write = try values.value(of: write),
              let notify = try values.value(of: notify)
        else { return nil }
        return VendorProtocolOptions(service: service, writeCharacteristic: write, notifyCharacteristic: notify)
    }
}
