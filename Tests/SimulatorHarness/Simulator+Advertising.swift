// The other side of the link (sim/README.md, "advertisements, GATT applications, a
// central"): what the state shows of registered advertisements and of bluetoothd's calls
// into clients' objects, and the control calls that act as bluetoothd or as a central.

/// One advertisement registered with the simulated LEAdvertisingManager1, as the state shows it.
public struct SimAdvertisement: Sendable, Decodable, Equatable {
    /// The registering client's unique name.
    public let client: String
    public let path: String
    public let type: String
    /// The bytes on air, hex: advertising data and scan response.
    public let advData: String
    public let scanResponse: String
    public let localName: String?
    public let includes: [String]
    public let appearance: Int?

    enum CodingKeys: String, CodingKey {
        case client, path, type, includes, appearance
        case advData = "adv_data"
        case scanResponse = "scan_response"
        case localName = "local_name"
    }
}

/// One call bluetoothd made into a client's object (GetManagedObjects, GetAll, Release, ...).
public struct SimAppCall: Sendable, Decodable, Equatable {
    public let member: String
    public let interface: String?
    public let client: String
    public let path: String
    /// "advertisement", "application", "central".
    public let purpose: String?
    /// "reply[:values]", "error:<name>", "sent" (no reply expected), "pending".
    public let outcome: String
}

extension Simulator {
    /// bluetoothd drops the advertisement at `path` itself: Release, then removed (control
    /// ReleaseAdvertisement).
    public func releaseAdvertisement(_ path: String) throws {
        _ = try control("ReleaseAdvertisement", typed: ["string:\(path)"])
    }

    /// The central (C0:FF:EE:00:CE:01) connects to the advertising adapter; returns once the
    /// link is up.
    public func centralConnect(mtu: Int = 247) throws {
        _ = try control("CentralConnect", typed: ["uint16:\(mtu)"])
    }

    /// The central ends its link.
    public func centralDisconnect() throws {
        _ = try control("CentralDisconnect", typed: [])
    }

    public func releaseAdvertisement(_ path: String) async throws { try await offThread { try self.releaseAdvertisement(path) } }
    public func centralConnect(mtu: Int = 247) async throws { try await offThread { try self.centralConnect(mtu: mtu) } }
    public func centralDisconnect() async throws { try await offThread { try self.centralDisconnect() } }
}
