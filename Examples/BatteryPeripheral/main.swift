// BlueZKit as a peripheral: this host serves a Battery Service (0x180F) whose Battery Level
// (0x2A19) a central can read and subscribe to, advertises it, and drains a percent every
// second, notifying subscribed centrals; it prints what centrals do, and after SECONDS
// unregisters the application and the advertisement (both are scoped to their closures).
// Usage: battery-peripheral [SECONDS]   (default 30)
import BlueZKit
#if canImport(Glibc)
import Glibc
#endif

/// Prints a line at once, also into a pipe: what a central does shows as it happens.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

let seconds = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 30
let application = GATTApplication(services: [
    .init(uuid: .batteryService, characteristics: [.init(uuid: .batteryLevel, flags: ["read", "notify"], value: [100])]),
])
do {
    let session = try await Session.open(timeout: .seconds(5))
    defer { session.close() }
    guard let adapter = Adapter.all(in: session).first(where: \.isPowered) else { throw BLEError.unavailable(.noAdapter(nil)) }
    try await adapter.withGATTApplication(application, timeout: .seconds(10)) { server in
        try await adapter.withAdvertisement(LEAdvertisement(localName: "battery", serviceUUIDs: [.batteryService]),
                                            timeout: .seconds(10)) { _ in
            say("serving at \(server.path)")
            let level = server.characteristics(.batteryLevel)[0]
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await event in server.events {
                        switch event {
                        case .read(let request): say("read by \(request.device?.description ?? "?"): \(request.value)")
                        case .subscribed: say("subscribed")
                        case .connected(let central): say("connected: \(central)")
                        default: break
                        }
                    }
                }
                group.addTask {
                    for _ in 0..<seconds {
                        try await Task.sleep(for: .seconds(1))
                        let percent = max(0, Int(server.value(of: level)[0]) - 1)
                        try await server.setValue([UInt8(percent)], of: level)
                    }
                }
                // The timer ends the run; the event loop ends when the application goes.
                try await group.next()
                group.cancelAll()
            }
        }
    }
    say("unregistered")
} catch {
    print("battery-peripheral: \(error)")
    exit(1)
}
