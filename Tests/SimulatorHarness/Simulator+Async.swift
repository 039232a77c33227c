import Foundation

/// The simulator's blocking calls (each waits for a process: bluez-sim starting or ending,
/// dbus-send asking its control interface) as async overloads that wait on a thread of their
/// own, never on the cooperative pool.
///
/// The test process shares one cooperative pool, as wide as the machine has cores (two in
/// CI). A test that waits there for a process takes a pool thread for that long; two such
/// waits at once stop every other test of the process (a sanitizer run of the whole suite
/// has stalled for 14 s that way, failing unrelated `eventually` waits). From an async
/// context Swift picks these overloads, and asks for `await`; a synchronous closure (an
/// ``offThread(_:)`` body, a `defer`) still gets the blocking originals.
extension Simulator {
    /// ``start(faults:bluez:)``, waited for off the pool.
    public static func start(faults: [String: String] = [:], bluez: String = defaultBluez) async throws -> Simulator {
        try await offThread { try Simulator.start(faults: faults, bluez: bluez) }
    }

    /// ``stopAndWait()``, waited for off the pool: the simulator has ended when it returns.
    public func stop() async {
        _ = try? await offThread { self.stopAndWait() }
    }

    public func killBus(busPID: Int32? = nil) async throws {
        try await offThread { try self.killBus(busPID: busPID) }
    }

    public func state() async throws -> SimState { try await offThread { try self.state() } }
    public func calls() async throws -> [SimCall] { try await offThread { try self.calls() } }
    public func setFault(_ name: String, _ value: String) async throws { try await offThread { try self.setFault(name, value) } }
    public func clearFaults() async throws { try await offThread { try self.clearFaults() } }
    public func blink() async throws { try await offThread { try self.blink() } }
    public func reset() async throws { try await offThread { try self.reset() } }

    public func notifyBurst(address: String, characteristic uuid: String, count: Int) async throws {
        try await offThread { try self.notifyBurst(address: address, characteristic: uuid, count: count) }
    }

    public func dropLink(address: String, remove: Bool = false) async throws {
        try await offThread { try self.dropLink(address: address, remove: remove) }
    }

    public func serviceChanged(address: String, service uuid: String) async throws {
        try await offThread { try self.serviceChanged(address: address, service: uuid) }
    }

    public func waitForState(timeout: Duration = .seconds(30),
                             _ condition: @escaping @Sendable (SimState) -> Bool) async throws -> Bool {
        try await offThread { try self.waitForState(timeout: timeout, condition) }
    }

    public func leftovers(within timeout: Duration = .seconds(60)) async throws -> [String] {
        try await offThread { try self.leftovers(within: timeout) }
    }

    public func run(_ executable: String, _ args: [String], environment: [String: String] = [:],
                    timeout: Duration = .seconds(30)) async -> (status: Int32, stdout: String, stderr: String) {
        (try? await offThread { self.run(executable, args, environment: environment, timeout: timeout) })
            ?? (127, "", "the runner thread failed")
    }

    public func setDeviceFault(address: String, kind: String, on: Bool = true) async throws {
        try await offThread { try self.setDeviceFault(address: address, kind: kind, on: on) }
    }

    public func deviceState(address: String) async throws -> SimDeviceState {
        try await offThread { try self.deviceState(address: address) }
    }
}
