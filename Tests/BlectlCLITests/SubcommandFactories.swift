@testable import BlectlCLI
import BlueZKit

// Expected parses, written as the values a command line gives: `.scan(ScanOptions(...))` is
// the scan subcommand with those values. The subcommands keep their values in their own
// declared properties; these records only name them for the tests.

/// A device subcommand's `<address>` and `--timeout`.
struct DeviceOptions: Equatable {
    var address: BluetoothAddress
    var timeout: Duration = .seconds(20)
}

/// `scan`'s options.
struct ScanOptions: Equatable {
    var timeout: Duration = .seconds(10)
    var names: [String] = []
    var services: [BluetoothUUID] = []
    var rssiMin: Int16?
    var addresses: [BluetoothAddress] = []
    var count: Int?
    var updates = false
}

/// `notify`'s argument and options.
struct NotifyOptions: Equatable {
    var address: BluetoothAddress
    var characteristic: BluetoothUUID
    var service: BluetoothUUID?
    var timeout: Duration = .seconds(10)
    var count: Int?
    var reconnect = false
}

/// The vendor protocol's three options, as the library describes the protocol.
typealias VendorProtocolOptions = VendorProtocol

extension Subcommand {
    static func scan(_ options: ScanOptions) -> Subcommand {
        var scan = ScanCommand()
        scan.timeout = options.timeout
        scan.names = options.names
        scan.services = options.services
        scan.rssiMin = options.rssiMin
        scan.addresses = options.addresses
        scan.count = options.count
        scan.updates = options.updates
        return Subcommand(scan)
    }

    static func connect(_ options: DeviceOptions) -> Subcommand {
        var connect = ConnectCommand()
        (connect.address, connect.timeout) = (options.address, options.timeout)
        return Subcommand(connect)
    }

    static func getVersion(_ options: DeviceOptions, _ vendor: VendorProtocolOptions?) -> Subcommand {
        var probe = GetVersionCommand()
        (probe.addresses, probe.timeout, probe.vendor) = ([options.address], options.timeout, vendor.map(VendorOptions.init))
        return Subcommand(probe)
    }

    /// `get-battery` over several devices.
    static func getBattery(_ addresses: [BluetoothAddress], timeout: Duration = .seconds(20), fleet: FleetOptions) -> Subcommand {
        var probe = GetBatteryCommand()
        (probe.addresses, probe.timeout, probe.fleet) = (addresses, timeout, fleet)
        return Subcommand(probe)
    }

    static func getBattery(_ options: DeviceOptions, _ vendor: VendorProtocolOptions?) -> Subcommand {
        var probe = GetBatteryCommand()
        (probe.addresses, probe.timeout, probe.vendor) = ([options.address], options.timeout, vendor.map(VendorOptions.init))
        return Subcommand(probe)
    }

    static func read(_ options: DeviceOptions, _ target: GATTTarget, descriptor: BluetoothUUID? = nil, offset: UInt16 = 0) -> Subcommand {
        var read = ReadCommand()
        (read.addresses, read.timeout, read.target, read.descriptor, read.offset) = ([options.address], options.timeout, target, descriptor, offset)
        return Subcommand(read)
    }

    static func write(_ options: DeviceOptions, _ target: GATTTarget, _ bytes: [UInt8], type: ConnectedDevice.WriteType = .request) -> Subcommand {
        Subcommand(WriteCommand(options: options, target: target, source: .value(bytes), type: type))
    }

    static func request(_ options: DeviceOptions, write: GATTTarget, notify: GATTTarget, _ bytes: [UInt8], prefix: [UInt8] = [],
                        count: Int = 1) -> Subcommand {
        var request = RequestCommand()
        (request.address, request.timeout) = (options.address, options.timeout)
        (request.writeCharacteristic, request.notifyCharacteristic, request.service) = (write.characteristic, notify.characteristic, write.service)
        request.value = bytes.hexString
        (request.prefix, request.count) = (prefix.isEmpty ? nil : prefix, count)
        try! request.validate()
        return Subcommand(request)
    }

    static func disconnect(_ options: DeviceOptions) -> Subcommand {
        var disconnect = DisconnectCommand()
        (disconnect.addresses, disconnect.timeout) = ([options.address], options.timeout)
        return Subcommand(disconnect)
    }

    static func notify(_ options: NotifyOptions) -> Subcommand {
        var notify = NotifyCommand()
        (notify.address, notify.target) = (options.address, GATTTarget(characteristic: options.characteristic, service: options.service))
        (notify.timeout, notify.count, notify.reconnect) = (options.timeout, options.count, options.reconnect)
        return Subcommand(notify)
    }

    static func info(_ address: BluetoothAddress, timeout: Duration = .seconds(10)) -> Subcommand {
        var info = InfoCommand()
        (info.addresses, info.timeout) = ([address], timeout)
        return Subcommand(info)
    }

    static func devices(timeout: Duration = .seconds(10), connected: Bool = false, paired: Bool = false) -> Subcommand {
        Subcommand(DevicesCommand(timeout: timeout, onlyConnected: connected, onlyPaired: paired))
    }

    static func adapters(timeout: Duration = .seconds(10)) -> Subcommand { Subcommand(AdaptersCommand(timeout: timeout)) }

    static func pair(_ options: DeviceOptions, trust: Bool = false, passkey: Passkey? = nil) -> Subcommand {
        var pair = PairCommand()
        (pair.address, pair.timeout, pair.trust, pair.passkey) = (options.address, options.timeout, trust, passkey)
        return Subcommand(pair)
    }

    static func unpair(_ options: DeviceOptions) -> Subcommand {
        var unpair = UnpairCommand()
        (unpair.address, unpair.timeout) = (options.address, options.timeout)
        return Subcommand(unpair)
    }
}

extension WriteCommand {
    /// A write as its values are written in the tests: a value's bytes, or a file.
    init(options: DeviceOptions, target: GATTTarget, source: Source, type: ConnectedDevice.WriteType) {
        self.init()
        (address, timeout, self.target, withoutResponse) = (options.address, options.timeout, target, type == .command)
        switch source {
        case .value(let bytes):
            value = bytes.hexString
            try! validate()
        case .file(let stream):
            file = stream.source
        }
    }
}

extension VendorOptions {
    init(_ vendor: VendorProtocol) {
        self.init()
        (service, write, notify) = (vendor.service, vendor.writeCharacteristic, vendor.notifyCharacteristic)
    }
}

extension Subcommand {
    static func advertise(_ advertisement: LEAdvertisement = LEAdvertisement(), timeout: Duration = ListeningTimeout.infinite) -> Subcommand {
        var command = AdvertiseCommand()
        (command.timeout, command.type, command.name, command.services) = (timeout, advertisement.type, advertisement.localName,
                                                                           advertisement.serviceUUIDs)
        (command.manufacturerData, command.serviceData) = (advertisement.manufacturerData, advertisement.serviceData)
        (command.txPower, command.appearance) = (advertisement.includes.contains(.txPower), advertisement.appearance)
        command.discoverable = advertisement.discoverable == true
        return Subcommand(command)
    }
}
