// The simulated central's requests (sim/README.md, "The central"): read, write, subscribe,
// unsubscribe an attribute of a registered GATT application, each answered when it ends
// with its record, and what the central holds (its link, operations, notifications).

import Foundation

/// One request of the simulated central, as the simulator records it.
public struct SimCentralOperation: Sendable, Decodable, Equatable {
    /// "read", "write", "write-command", "subscribe", "unsubscribe".
    public let op: String
    public let path: String
    public let handle: Int
    /// "value", "written", "sent", "att_error", "timeout", "disconnected", "dropped", "pending".
    public let outcome: String
    /// What the central got, hex (a read).
    public let value: String?
    /// What the application answered, hex, before the central's MTU cut it.
    public let appValue: String?
    /// The ATT error, "0x07".
    public let attError: String?
    public let dbusError: String?

    enum CodingKeys: String, CodingKey {
        case op, path, handle, outcome, value
        case appValue = "app_value"
        case attError = "att_error"
        case dbusError = "dbus_error"
    }
}

/// A notification or indication the central received.
public struct SimCentralNotification: Sendable, Decodable, Equatable {
    /// "notification" or "indication".
    public let kind: String
    public let path: String
    public let value: String
}

/// The central as `CentralState()` gives it.
public struct SimCentralState: Sendable, Decodable {
    public let connected: Bool
    public let mtu: Int
    public let operations: [SimCentralOperation]
    public let notifications: [SimCentralNotification]
}

/// One registered GATT application, as `Applications()` gives it.
public struct SimApplication: Sendable, Decodable, Equatable {
    public let client: String
    public let path: String
}

extension Simulator {
    /// The central reads `target` (an object path, a handle or a UUID) from `offset`.
    public func centralRead(_ target: String, offset: Int = 0) throws -> SimCentralOperation {
        try decode(control("CentralRead", typed: ["string:\(target)", "uint16:\(offset)"]))
    }

    /// The central writes `value` (at least one byte): a Write Request, or a Write Command.
    public func centralWrite(_ target: String, _ value: [UInt8], command: Bool = false, offset: Int = 0) throws -> SimCentralOperation {
        let bytes = "array:byte:" + value.map { String(format: "0x%02x", $0) }.joined(separator: ",")
        return try decode(control("CentralWrite", typed: ["string:\(target)", bytes, "boolean:\(command)", "uint16:\(offset)"]))
    }

    /// The central writes the CCC of `target`: notifications, or indications.
    public func centralSubscribe(_ target: String, indicate: Bool = false) throws -> SimCentralOperation {
        try decode(control("CentralSubscribe", typed: ["string:\(target)", "boolean:\(indicate)"]))
    }

    public func centralUnsubscribe(_ target: String) throws -> SimCentralOperation {
        try decode(control("CentralUnsubscribe", typed: ["string:\(target)"]))
    }

    public func centralState() throws -> SimCentralState { try decode(control("CentralState", typed: [])) }

    /// The GATT applications registered now.
    public func applications() throws -> [SimApplication] {
        struct Reply: Decodable { let applications: [SimApplication] }
        let reply: Reply = try decode(control("Applications", typed: []))
        return reply.applications
    }

    private func decode<T: Decodable>(_ text: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    public func centralRead(_ target: String, offset: Int = 0) async throws -> SimCentralOperation {
        try await offThread { try self.centralRead(target, offset: offset) }
    }
    public func centralWrite(_ target: String, _ value: [UInt8], command: Bool = false, offset: Int = 0) async throws -> SimCentralOperation {
        try await offThread { try self.centralWrite(target, value, command: command, offset: offset) }
    }
    public func centralSubscribe(_ target: String, indicate: Bool = false) async throws -> SimCentralOperation {
        try await offThread { try self.centralSubscribe(target, indicate: indicate) }
    }
    public func centralUnsubscribe(_ target: String) async throws -> SimCentralOperation {
        try await offThread { try self.centralUnsubscribe(target) }
    }
    public func centralState() async throws -> SimCentralState { try await offThread { try self.centralState() } }
    public func applications() async throws -> [SimApplication] { try await offThread { try self.applications() } }
}
