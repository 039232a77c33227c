// BlueZKit in a few lines: scan until a device is heard (printing what is heard), then print
// the notifications of one of its characteristics.
// Usage: scan-notify ADDRESS SERVICE CHARACTERISTIC COUNT   (e.g. C0:FF:EE:00:00:01 180f 2a19 5)
import BlueZKit
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 4, let address = BluetoothAddress(arguments[0]), let serviceUUID = BluetoothUUID(arguments[1]),
      let characteristicUUID = BluetoothUUID(arguments[2]), let count = Int(arguments[3]) else {
    print("usage: scan-notify ADDRESS SERVICE CHARACTERISTIC COUNT")
    exit(64)
}
do {
let session = try await Session.open(timeout: .seconds(5))
guard let adapter = Adapter.all(in: session).first(where: \.isPowered) else { throw BLEError.unavailable(.noAdapter(nil)) }
try await adapter.withDiscovery(filter: DiscoveryFilter(), setupTimeout: .seconds(5)) { advertisements in
    for try await batch in advertisements {
        for heard in batch { print("heard", heard.address, heard.rssi.map { "\($0) dBm" } ?? "") }
        if batch.contains(where: { $0.address == address }) { break }
    }
}
try await Device(adapter: adapter, address: address).withConnection(timeout: .seconds(20)) { device in
    let characteristic = try device.characteristic(characteristicUUID, in: try await device.service(serviceUUID, timeout: .seconds(5)))
    try await device.withNotificationStream(characteristic, setupTimeout: .seconds(5)) { values in
        for try await value in values.prefix(count) { print("notified", value.map { String($0, radix: 16) }) }
    }
}
} catch {
    print("scan-notify: \(error)")
    exit(1)
}
