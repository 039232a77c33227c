import BlueZKit

/// blectl's command line, declared once: every option, argument and subcommand with
/// its help text, parser and default. `ArgumentParser` matches against `root`,
/// `HelpFormatter` renders help from it, and the `…Options(from:)` functions read
/// typed values through the same declarations.
enum BlectlCommands {
    /// Options of the root, accepted before or after any subcommand (but `--version`
    /// only before it).
    enum Global {
        static let adapter = Option<String>(
            "adapter", valueName: "adapter",
            help: "Bluetooth adapter to use, like hci0; without it, the first powered adapter.",
            parser: .adapterName, global: true
        )
        static let format = Option<OutputFormat>(
            "format", valueName: "format",
            help: "Output format: \(OutputFormat.choicesList).",
            parser: .choice, default: GlobalOptions.defaultFormat, global: true
        )
        static let version = Flag("version", help: "Show the version.")

        static func options(from values: ParsedValues) throws(UsageError) -> GlobalOptions {
            GlobalOptions(adapter: try values.value(of: adapter), format: try values.requiredValue(of: format))
        }
    }

    enum Scan {
        static let timeout = Option<Duration>(
            "timeout", valueName: "seconds",
            help: "Stop scanning after this many seconds; decimals allowed.",
            parser: .seconds, default: ScanOptions.defaultTimeout
        )
        static let name = Option<String>(
            "name", valueName: "substring",
            help: "Only report devices whose name contains this text, ignoring case. Repeat to accept any of several.",
            parser: .nonEmpty(expecting: "a non-empty part of a device name"), repeatable: true
        )
        static let service = Option<BluetoothUUID>(
            "service", valueName: "uuid",
            help: "Only report devices advertising this service UUID, such as 180f. Repeat to accept any of several.",
            parser: .uuid, repeatable: true
        )
        static let rssiMin = Option<Int16>(
            "rssi-min", valueName: "dbm",
            help: "Only report devices heard at this signal strength or stronger, in dBm from \(ScanOptions.rssiRange.lowerBound) to \(ScanOptions.rssiRange.upperBound).",
            parser: .dBm(in: ScanOptions.rssiRange)
        )
        static let updates = Flag(
            "updates",
            help: "Print a line for every advertisement update, not just the first sighting of each device."
        )

        static let command = CommandSpec(
            name: "scan",
            abstract: "Scan for Bluetooth LE devices and print each one found.",
            discussion: [
                "Prints one JSON line per device as it is first seen during this scan, until the timeout; reaching the timeout is success, even with no device found. Devices BlueZ only remembers from earlier are not printed. A device must pass every kind of filter given (checked by BlueZ and again by blectl). --timeout 0 connects, checks the adapter and prints nothing.",
            ],
            options: [timeout.spec, name.spec, service.spec, rssiMin.spec, updates.spec]
        )

        static func options(from values: ParsedValues) throws(UsageError) -> ScanOptions {
            ScanOptions(
                timeout: try values.requiredValue(of: timeout),
                names: try values.values(of: name),
                services: try values.values(of: service),
                rssiMin: try values.value(of: rssiMin),
                updates: values.isSet(updates)
            )
        }
    }

    /// The argument and options shared by every subcommand that talks to one device.
    enum Device {
        static let address = Argument<BluetoothAddress>(
            "address", help: "The device's address, like C0:FF:EE:00:00:01.", parser: .address
        )
        static let timeout = Option<Duration>(
            "timeout", valueName: "seconds",
            help: "Give up after this many seconds, connecting included; decimals allowed.",
            parser: .seconds, default: DeviceOptions.defaultTimeout
        )

        static func options(from values: ParsedValues) throws(UsageError) -> DeviceOptions {
            DeviceOptions(address: try values.requiredValue(of: address), timeout: try values.requiredValue(of: timeout))
        }
    }

    /// `--vendor-service`, `--vendor-write`, `--vendor-notify`: all three or none.
    enum Vendor {
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

        /// `nil` when none of the three was given (the parser has already rejected
        /// one or two of them).
        static func options(from values: ParsedValues) throws(UsageError) -> VendorProtocolOptions? {
            guard let service = try values.value(of: service),
                  let write = try values.value(of: write),
                  let notify = try values.value(of: notify)
            else { return nil }
            return VendorProtocolOptions(service: service, writeCharacteristic: write, notifyCharacteristic: notify)
        }
    }

    static let connect = CommandSpec(
        name: "connect",
        abstract: "Connect to a device and print its GATT services.",
        discussion: [
            "Finds the device (scanning if BlueZ does not know it), connects, waits until its GATT services are resolved, prints the service tree, then disconnects, unless the device was already connected.",
        ],
        arguments: [Device.address.spec],
        options: [Device.timeout.spec]
    )

    static let getVersion = CommandSpec(
        name: "get-version", aliases: ["version"],
        abstract: "Read a device's firmware version.",
        discussion: [
            "Reads the Device Information service (0x180A): firmware (0x2A26), hardware (0x2A27) and software (0x2A28) revisions, manufacturer (0x2A29) and model (0x2A24); absent ones are null. With --vendor-service, --vendor-write and --vendor-notify, writes 0x01 and takes the answer 0x81 major minor patch from notifications instead.",
        ],
        arguments: [Device.address.spec],
        options: [Device.timeout.spec] + Vendor.specs,
        allOrNoneGroups: [Vendor.specs.map(\.long)]
    )

    static let getBattery = CommandSpec(
        name: "get-battery", aliases: ["battery"],
        abstract: "Read a device's battery level.",
        discussion: [
            "Takes org.bluez.Battery1's Percentage if BlueZ has it, else reads the Battery Level (0x2A19) of the Battery Service (0x180F), else waits briefly for Battery1 to appear; a percentage from 0 to 100. With --vendor-service, --vendor-write and --vendor-notify, writes 0x02 and takes the answer 0x82 percent from notifications instead.",
        ],
        arguments: [Device.address.spec],
        options: [Device.timeout.spec] + Vendor.specs,
        allOrNoneGroups: [Vendor.specs.map(\.long)]
    )

    enum Help {
        static let subcommand = Argument<String>(
            "subcommand", help: "The subcommand to describe.", parser: .verbatim, optional: true
        )
        static let command = CommandSpec(
            name: "help",
            abstract: "Show subcommand help information.",
            arguments: [subcommand.spec],
            inheritsGlobalOptions: false
        )
    }

    /// Exit statuses, shown in the top-level help.
    static let exitStatus = HelpSection(
        title: "EXIT STATUS",
        rows: ExitStatus.allCases.map { (String($0.rawValue), $0.summary) }
            + [("130", "Interrupted by SIGINT."), ("141", "Standard output's reader went away (SIGPIPE)."),
               ("143", "Interrupted by SIGTERM.")],
        textColumn: 8
    )

    static let root = CommandSpec(
        name: "blectl",
        abstract: "Probe Bluetooth LE devices through BlueZ.",
        options: [Global.adapter.spec, Global.format.spec, Global.version.spec],
        subcommands: [Scan.command, connect, getVersion, getBattery, Help.command],
        extraSections: [exitStatus]
    )

    /// `[root]` for `nil`, `[root, scan]` for `"scan"`; unknown names give `[root]`.
    static func path(forSubcommand name: String?) -> [CommandSpec] {
        var path = [root]
        for word in name?.split(separator: " ") ?? [] {
            guard let next = path[path.count - 1].subcommand(named: String(word)) else { return [root] }
            path.append(next)
        }
        return path
    }
}
