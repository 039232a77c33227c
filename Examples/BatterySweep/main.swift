// BlueZKit for a fleet: the battery level of every device in a list, read concurrently over
// one session. Each task finds its device (the session shares one discovery among them),
// connects, reads the level and disconnects without waiting for BlueZ's disconnect timer;
// a device that fails is reported on its own line and the others go on.
// Usage: battery-sweep ADDRESS...   (e.g. C0:FF:EE:00:00:01 C0:FF:EE:00:00:03 C0:FF:EE:00:00:04)
import BlueZKit
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let addresses = arguments.compactMap { BluetoothAddress($0) }
guard !addresses.isEmpty, addresses.count == arguments.count else {
    print("usage: battery-sweep ADDRESS...")
    exit(64)
}
do {
    let session = try await Session.open(timeout: .seconds(5))
    guard let adapter = Adapter.all(in: session).first(where: \.isPowered) else { throw BLEError.unavailable(.noAdapter(nil)) }
    let failures = await withTaskGroup(of: Bool.self) { group in
        for address in addresses {
            group.addTask {
                do {
                    // Each device within 20 s: finding it, connecting, reading.
                    let deadline = ContinuousClock.now + .seconds(20)
                    let device = try await Device.find(address, on: adapter, timeout: deadline - .now)
                    let reading = try await device.withConnection(timeout: deadline - .now) { connected in
                        try await connected.batteryLevel(timeout: deadline - .now)
                    }
                    print(address, "\(reading.percentage) %", reading.source.rawValue)
                    return true
                } catch {
                    print(address, "error:", error)
                    return false
                }
            }
        }
        var failures = 0
        for await succeeded in group where !succeeded { failures += 1 }
        return failures
    }
    // Disconnects are on the wire; bluetoothd completes them after we leave the bus.
    session.close()
    exit(failures == 0 ? 0 : 1)
} catch {
    print("battery-sweep: \(error)")
    exit(1)
}
