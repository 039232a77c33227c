@testable import BlectlCLI
import BlueZKit

/// Short forms for expected parses: `.scan(ScanOptions(...))` is the scan subcommand with
/// those options.
extension Subcommand {
    static func scan(_ options: ScanOptions) -> Subcommand { Subcommand(ScanCommand(options: options)) }
    static func connect(_ options: DeviceOptions) -> Subcommand { Subcommand(ConnectCommand(options: options)) }
    static func getVersion(_ options: DeviceOptions, _ vendor: VendorProtocolOptions?) -> Subcommand {
        Subcommand(GetVersionCommand(options: options, vendor: vendor))
    }
    static func getBattery(_ options: DeviceOptions, _ vendor: VendorProtocolOptions?) -> Subcommand {
        Subcommand(GetBatteryCommand(options: options, vendor: vendor))
    }
    static func read(_ options: DeviceOptions, _ target: GATTTarget, descriptor: BluetoothUUID? = nil, offset: UInt16 = 0) -> Subcommand {
        Subcommand(ReadCommand(options: options, target: target, descriptor: descriptor, offset: offset))
    }
    static func write(_ options: DeviceOptions, _ target: GATTTarget, _ bytes: [UInt8], type: ConnectedDevice.WriteType = .request) -> Subcommand {
        Subcommand(WriteCommand(options: options, target: target, source: .value(bytes), type: type))
    }
    static func request(_ options: DeviceOptions, write: GATTTarget, notify: GATTTarget, _ bytes: [UInt8], prefix: [UInt8] = [],
                        count: Int = 1) -> Subcommand {
        Subcommand(RequestCommand(options: options, write: write, notify: notify, request: bytes, prefix: prefix, count: count))
    }
    static func disconnect(_ options: DeviceOptions) -> Subcommand { Subcommand(DisconnectCommand(options: options)) }
    static func notify(_ options: NotifyOptions) -> Subcommand { Subcommand(NotifyCommand(options: options)) }
    static func info(_ address: BluetoothAddress, timeout: Duration = .seconds(10)) -> Subcommand {
        Subcommand(InfoCommand(address: address, timeout: timeout))
    }
    static func devices(timeout: Duration = .seconds(10), connected: Bool = false, paired: Bool = false) -> Subcommand {
        Subcommand(DevicesCommand(timeout: timeout, onlyConnected: connected, onlyPaired: paired))
    }
    static func adapters(timeout: Duration = .seconds(10)) -> Subcommand { Subcommand(AdaptersCommand(timeout: timeout)) }
    static func pair(_ options: DeviceOptions, trust: Bool = false, passkey: Passkey? = nil) -> Subcommand {
        Subcommand(PairCommand(options: options, trust: trust, passkey: passkey))
    }
    static func unpair(_ options: DeviceOptions) -> Subcommand { Subcommand(UnpairCommand(options: options)) }
}
