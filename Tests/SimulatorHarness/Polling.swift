/// The test suites' one way to wait for a state that has no event of their own to await (a
/// counter in the library, the simulator's State): polls `condition` every `interval` until
/// it holds or `limit` has passed.
/// - Returns: whether the condition held.
public func eventually(within limit: Duration = .seconds(10), every interval: Duration = .milliseconds(5),
                       _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// As ``eventually(within:every:_:)``, for a condition that has to ask (a bus call, the
/// simulator's State); what the condition throws is thrown.
public func eventually(within limit: Duration = .seconds(10), every interval: Duration = .milliseconds(5),
                       _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: interval)
    }
    return true
}
