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
    static func pair(_ options: DeviceOptions, trust: Bool = false, passkey: Passkey? = nil) -> Subcommand {
        Subcommand(PairCommand(options: options, trust: trust, passkey: passkey))
    }
    static func unpair(_ options: DeviceOptions) -> Subcommand { Subcommand(UnpairCommand(options: options)) }
}
