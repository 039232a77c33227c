// What a client could have left behind in the simulator, shared by the library and the
// end-to-end tests.

extension SimState {
    /// Everything a well-behaved blectl leaves behind, described; empty when clean.
    public var leftovers: [String] {
        var found: [String] = []
        if !discoverySessions.isEmpty { found.append("discovery sessions \(discoveryClients)") }
        let connected = connections.filter { !$0.preconnected }
        if !connected.isEmpty { found.append("connections \(connected.map(\.address))") }
        if !pendingStartDiscovery.isEmpty { found.append("pending StartDiscovery \(pendingStartDiscovery)") }
        if !pendingConnects.isEmpty { found.append("pending connects \(pendingConnects)") }
        if !pendingGATT.isEmpty { found.append("pending GATT \(pendingGATT.map(\.op))") }
        if !notifySessions.isEmpty { found.append("notify sessions \(notifySessions.map(\.path))") }
        if let agents, !agents.isEmpty { found.append("agents \(agents.map(\.path))") }
        if let pairings, !pairings.isEmpty { found.append("pairings \(pairings.map(\.address))") }
        if let advertisements, !advertisements.isEmpty { found.append("advertisements \(advertisements.map(\.path))") }
        if let applications, !applications.isEmpty { found.append("GATT applications \(applications.map(\.path))") }
        return found
    }
}
