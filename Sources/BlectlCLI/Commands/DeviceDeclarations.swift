import BlueZKit

/// What the subcommands that work on one device declare alike.
extension ArgumentDeclaration where Parsed == BluetoothAddress {
    /// `<address>`: the device.
    static var device: Self {
        ArgumentDeclaration("address", help: "The device's address, like C0:FF:EE:00:00:01.", parser: .address)
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
}
