// The simulator's fleets (sim/README.md, "Fleets"): the addresses and values of `fleet=N`,
// LE connection creation as the state shows it, and the faults of one device.

import Foundation

extension SimState {
    /// The adapter's LE connection creation (`le_connect`).
    public struct LEConnect: Sendable, Decodable, Equatable {
        /// Whether connections are made one at a time (`le_connect_serial`).
        public let serial: Bool
        /// `le_max_links` (0: no cap).
        public let maxLinks: Int
        /// LE links up, or going down through the disconnect timer.
        public let links: Int
        /// Devices whose connection is being made.
        public let creating: [String]
        /// Devices waiting their turn, first first.
        public let queued: [String]
        /// Devices whose Connect waits while they do not advertise (they hold no turn).
        public let unheard: [String]
        enum CodingKeys: String, CodingKey {
            case serial, links, creating, queued, unheard
            case maxLinks = "max_links"
        }
    }

    /// One LE connection creation (`le_creations`); times in CLOCK_MONOTONIC seconds.
    public struct LECreation: Sendable, Decodable, Equatable {
        public let address: String
        /// When its Connect asked for it.
        public let queued: Double
        /// When its turn came (nil while queued).
        public let start: Double?
        /// When it ended (nil while under way).
        public let end: Double?
        /// connected, le-connection-abort-by-remote, le-connection-abort-by-local,
        /// link-limit (refused by the cap), cancelled, or another Failed message; nil while
        /// under way.
        public let result: String?
    }
}

/// One device as `DeviceState` (`blectl-sim device ADDRESS`) gives it.
public struct SimDeviceState: Sendable, Decodable, Equatable {
    public let address: String
    public let inTree: Bool
    public let advertising: Bool
    /// "no", "queued" or "creating".
    public let connecting: String
    public let connected: Bool
    public let servicesResolved: Bool
    public let paired: Bool
    public let faults: [String]
    enum CodingKeys: String, CodingKey {
        case address, advertising, connecting, connected, paired, faults
        case inTree = "in_tree"
        case servicesResolved = "services_resolved"
    }
}

/// The devices of `fleet=N`: device i (1...N) by its number.
public enum Fleet {
    /// C0:FF:EE:F1:HH:LL, HH:LL = i in upper-case hex.
    public static func address(_ i: Int) -> String {
        String(format: "C0:FF:EE:F1:%02X:%02X", i >> 8, i & 0xFF)
    }
    /// Battery level: 0x2A19 and Battery1.
    public static func battery(_ i: Int) -> Int { i % 101 }
    /// Firmware Revision String (0x2A26).
    public static func firmware(_ i: Int) -> String { "1.0.\(i)" }
    /// The object path BlueZ gives it.
    public static func path(_ i: Int) -> String {
        "/org/bluez/hci0/dev_" + address(i).replacing(":", with: "_")
    }
}

extension Simulator {
    /// Gives device `address` a fault of its own (abort-once, drop-once, needs-pairing,
    /// absent, vanish-after-connect), or takes it away (`on: false`).
    public func setDeviceFault(address: String, kind: String, on: Bool = true) throws {
        _ = try control("DeviceFault", typed: ["string:\(address)", "string:\(kind)", "boolean:\(on)"])
    }

    /// One device of the world: in the tree, advertising, connecting, connected, its faults.
    public func deviceState(address: String) throws -> SimDeviceState {
        let text = try control("DeviceState", typed: ["string:\(address)"])
        do { return try JSONDecoder().decode(SimDeviceState.self, from: Data(text.utf8)) }
        catch { throw HarnessError.badJSON("\(error): \(text)") }
    }
}
