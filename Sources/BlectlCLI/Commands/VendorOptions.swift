import BlueZKit

/// `--vendor-service`, `--vendor-write` and `--vendor-notify`: the library's description of a
/// vendor request/response protocol. `get-version` and `get-battery` take it as an optional
/// group (`@OptionGroup var vendor: VendorOptions?`): all three or none.
struct VendorOptions: ParsableArguments, Equatable {
    @Option("vendor-service", valueName: "uuid",
            help: "Ask through a vendor protocol in this GATT service instead. Needs --vendor-write and --vendor-notify.",
            parser: .uuid)
    var service: BluetoothUUID

    @Option("vendor-write", valueName: "uuid",
            help: "The vendor protocol's characteristic that requests are written to.",
            parser: .uuid)
    var write: BluetoothUUID

    @Option("vendor-notify", valueName: "uuid",
            help: "The vendor protocol's characteristic whose notifications carry the answers.",
            parser: .uuid)
    var notify: BluetoothUUID

    /// The protocol the three options describe.
    var vendorProtocol: VendorProtocol {
        VendorProtocol(service: service, writeCharacteristic: write, notifyCharacteristic: notify)
    }
}
