import BlueZKit

/// What the subcommands that work on one device declare alike.
extension ArgumentDeclaration where Parsed == BluetoothAddress {
    /// `<address>`: the device.
    static var device: Self {
        ArgumentDeclaration("address", help: "The device's address, like C0:FF:EE:00:00:01.", parser: .address)
    }

    /// `<address> ...`: the devices of a command that takes several (``DeviceCommand``).
    static var devices: Self {
        ArgumentDeclaration("address", help: "The device's address, like C0:FF:EE:00:00:01; several for several devices (one JSON line each), or none with --from.",
                            parser: .address)
    }
}

extension OptionDeclaration where Parsed == Duration {
    /// `--timeout` of the subcommands that connect to the device: the whole command,
    /// connecting included, more than 0 (0 is a usage error: nothing could be done in it), up
    /// to 86400 s.
    static var connectionTimeout: Self {
        .timeout(help: "Give up after this many seconds, connecting included; decimals allowed, more than 0.",
                 parser: .seconds(allowingZero: false))
    }

    /// `--timeout` of the subcommands that connect to each of several devices
    /// (``DeviceCommand``): each device's own limit, connecting included.
    static var deviceTimeout: Self {
        .timeout(help: "Give up on a device after this many seconds, connecting included (each device its own); decimals allowed, more than 0.",
                 parser: .seconds(allowingZero: false))
    }
}

extension OptionDeclaration where Parsed == Int {
    /// `--retries` of the subcommands that connect to a device: how many times a retryable
    /// failure is tried again within `--timeout` (``RetryPolicy``), 0 to 1000.
    static var retries: Self {
        OptionDeclaration("retries", valueName: "n",
                          help: "Try a transient failure (one whose error has retryable true) again up to this many times, with a pause of 0.25 s doubling to 2 s, within the timeout.",
                          parser: .wholeNumber(in: 0...1000))
    }
}
