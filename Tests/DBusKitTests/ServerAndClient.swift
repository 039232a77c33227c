// Two connections to one private bus daemon: a `server` that exports objects and a `client`
// that calls them, as most of the export and flush tests need.

import DBusKit
import SimulatorHarness

struct ServerAndClient {
    let bus: PrivateBus
    let server: BusConnection
    let client: BusConnection

    /// Starts a private dbus-daemon and connects both (the server first).
    static func start() async throws -> ServerAndClient {
        let bus = try await PrivateBus.start()
        do {
            let server = try await BusConnection.connect(to: bus.address)
            do {
                return ServerAndClient(bus: bus, server: server, client: try await BusConnection.connect(to: bus.address))
            } catch {
                server.close()
                throw error
            }
        } catch {
            bus.kill()
            throw error
        }
    }

    /// Closes the client, then the server, then stops the bus daemon.
    func close() {
        client.close()
        server.close()
        bus.kill()
    }
}
