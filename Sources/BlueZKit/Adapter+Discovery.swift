import DBusKit

/// How long clean-up after an interrupted operation (StopDiscovery, Disconnect, StopNotify)
/// may take of our own time.
public enum CleanupPolicy {
    public static let interruptedTimeout: Duration = .milliseconds(400)
    /// How long clean-up waits for the reply to a start call (StartDiscovery, StartNotify)
    /// still pending when the operation was interrupted, so that the matching stop follows a
    /// start that succeeded: BlueZ answers the stop with InProgress while the start is pending
    /// (bluez/src/adapter.c stop_discovery), so it cannot be sent earlier. Closing the bus
    /// connection ends whatever is still left after that.
    public static let pendingStartTimeout: Duration = .seconds(2)
    /// How long a StartDiscovery may stay unanswered once the adapter is discovering before
    /// the scan goes on without its reply. BlueZ 5.66 keeps one pending start per adapter
    /// (bluez/src/adapter.c start_discovery: `adapter->client`): when two clients start
    /// discovery at once, the first one's StartDiscovery is never answered, although its
    /// session is registered and the adapter discovers for it (seen with two `blectl scan`
    /// started together on a real bluetoothd). An answered start is answered within
    /// milliseconds of the Discovering change (both follow the kernel's start), so half a
    /// second is plenty; a reply that still comes later is waited for at the end and the
    /// StopDiscovery sent.
    public static let unansweredStartGrace: Duration = .milliseconds(500)
}

extension Adapter {
    /// The Device1 properties whose change means the device was heard during this scan.
    static let sightingProperties: Set<String> = ["RSSI", "ManufacturerData", "ServiceData", "TxPower"]
    /// Advertising data that may complete a device already heard during this scan: the kernel
    /// can report an advertisement and its scan response (which often carries the service
    /// UUIDs or the name) separately, so a device first seen without them gets them as a
    /// later change; the filters are checked again then.
    static let advertisingDataProperties: Set<String> = ["UUIDs", "Name"]

    /// Runs `body` while this adapter discovers LE devices, then stops discovery.
    ///
    /// Sets the discovery filter (Transport "le", DuplicateData explicit, UUIDs and RSSI when
    /// asked), then StartDiscovery (an `org.bluez.Error.InProgress` answer is retried once after
    /// 200 ms; a StartDiscovery still unanswered ``CleanupPolicy/unansweredStartGrace`` after
    /// the adapter started discovering is taken as started, see there). `body` gets a stream
    /// of batches of devices *seen during this scan* (added, or a change of RSSI, ManufacturerData, ServiceData or TxPower; then also a change of UUIDs or
    /// Name, as a scan response completes the advertisement) that pass `filter`, checked
    /// again here because BlueZ merges the filters of all clients. Devices only cached from
    /// earlier are never reported.
    ///
    /// The stream ends with an error when the adapter powers off or goes away
    /// (``BLEError/unavailable(_:)``) or bluetoothd leaves the bus. When `body` returns or
    /// throws, or the task is cancelled, StopDiscovery is sent, after the StartDiscovery reply if
    /// that was still pending (waited for up to ``CleanupPolicy/pendingStartTimeout``), under
    /// ``CleanupPolicy/interruptedTimeout``; its errors (NotReady,
    /// "No discovery started", InProgress) are dropped and never replace the result.
    /// - Parameters:
    ///   - filter: what to report.
    ///   - setupTimeout: the limit for SetDiscoveryFilter and StartDiscovery.
    /// - Throws: ``BLEError/busy(_:dbusError:message:)`` when discovery stays InProgress,
    ///   ``BLEError/unavailable(_:)``, ``BLEError/failed(_:dbusError:message:)``,
    ///   ``BLEError/timedOut(_:)``, what `body` throws, `CancellationError`.
    public func withDiscovery<T: Sendable>(
        filter: DiscoveryFilter, setupTimeout: Duration,
        _ body: (AsyncThrowingStream<[Advertisement], any Error>) async throws -> T
    ) async throws -> T {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Advertisement].self)
        let watcher = session.addWatcher(discoveryWatcher(filter: filter, continuation: continuation))
        let operation = BLEOperation(.discovery)
        let session = self.session
        let path = self.path
        // Not a child of this task: its reply must be seen even when we are cancelled, so that
        // StopDiscovery follows a StartDiscovery that succeeded.
        let start = Task<Void, any Error> {
            _ = try await session.call(BlueZ.call(path, BlueZ.adapterInterface, "SetDiscoveryFilter", [filter.dbusValue]),
                                       operation: operation, timeout: setupTimeout)
            do {
                _ = try await session.call(BlueZ.call(path, BlueZ.adapterInterface, "StartDiscovery"), operation: operation, timeout: setupTimeout)
            } catch BLEError.busy {
                try await Task.sleep(for: .milliseconds(200))
                do {
                    _ = try await session.call(BlueZ.call(path, BlueZ.adapterInterface, "StartDiscovery"), operation: operation, timeout: setupTimeout)
                } catch BLEError.busy(let op, let name, let message) {
                    throw BLEError.busy(op, dbusError: name, message: "adapter busy: discovery could not start (\(message))")
                }
            }
        }
        let result: Result<T, any Error>
        var answered = true
        do {
            answered = try await awaitStartDiscovery(start, setupTimeout: setupTimeout)
            result = .success(try await body(stream))
        } catch {
            result = .failure(error)
        }
        session.removeWatcher(watcher)
        continuation.finish()
        // A start left unanswered stays so (BlueZ answers StopDiscovery InProgress until
        // then); closing the bus connection ends that session, so do not wait long for it.
        let startWait = answered ? CleanupPolicy.pendingStartTimeout : CleanupPolicy.interruptedTimeout
        await runCleanup {
            guard (try? await awaitCancellable(start, timeout: startWait)) != nil else { return }
            _ = try? await session.call(BlueZ.call(path, BlueZ.adapterInterface, "StopDiscovery"), operation: operation,
                                        timeout: CleanupPolicy.interruptedTimeout)
        }
        return try result.get()
    }

    /// Waits for the StartDiscovery reply (`start`), or, when the adapter has been
    /// discovering for ``CleanupPolicy/unansweredStartGrace`` without that reply, goes on
    /// without it. Returns whether the reply came.
    private func awaitStartDiscovery(_ start: Task<Void, any Error>, setupTimeout: Duration) async throws -> Bool {
        let session = self.session
        let path = self.path
        let operation = BLEOperation(.discovery)
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await awaitCancellable(start)
                return true
            }
            group.addTask {
                try await session.wait(for: operation, timeout: setupTimeout) { cache, _ -> WaitStep<Void> in
                    cache.property("Discovering", of: path, on: BlueZ.adapterInterface)?.bool == true ? .done(()) : .keepWaiting
                }
                try await Task.sleep(for: CleanupPolicy.unansweredStartGrace)
                return false
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw CancellationError() }
            return first
        }
    }

    private func discoveryWatcher(filter: DiscoveryFilter, continuation: AsyncThrowingStream<[Advertisement], any Error>.Continuation) -> Session.Watcher {
        let adapterPath = path
        let adapterName = name
        let heard = Lock(Set<ObjectPath>())   // devices heard during this scan
        return { cache, changes in
            var seen = [ObjectPath]()
            var failure: BLEError?
            for change in changes {
                switch change {
                case .added(let path, let interfaces):
                    if interfaces.contains(BlueZ.deviceInterface), path.parent == adapterPath { seen.append(path) }
                case .changed(let path, BlueZ.deviceInterface, let changed, _):
                    guard path.parent == adapterPath else { break }
                    if changed.contains(where: Adapter.sightingProperties.contains)
                        || (changed.contains(where: Adapter.advertisingDataProperties.contains) && heard.withLock { $0.contains(path) }) {
                        seen.append(path)
                    }
                case .changed(adapterPath, BlueZ.adapterInterface, let changed, _):
                    if changed.contains("Powered"), cache.property("Powered", of: adapterPath, on: BlueZ.adapterInterface)?.bool == false {
                        failure = .unavailable(.poweredOff(adapterName))
                    }
                case .removed(adapterPath, let interfaces) where interfaces.contains(BlueZ.adapterInterface):
                    failure = .unavailable(.noAdapter(adapterName))
                case .bluezVanished:
                    failure = .unavailable(.bluezLeft)
                case .busLost:
                    failure = .unavailable(.busUnreachable("the connection to the system bus was lost"))
                default:
                    break
                }
            }
            if !seen.isEmpty { heard.withLock { $0.formUnion(seen) } }
            var batch = [Advertisement]()
            for path in seen {
                guard let properties = cache[path, BlueZ.deviceInterface],
                      let advertisement = Advertisement(path: path, properties: properties),
                      filter.matches(advertisement) else { continue }
                batch.append(advertisement)
            }
            guard !batch.isEmpty || failure != nil else { return nil }
            return { [batch, failure] in
                if !batch.isEmpty { continuation.yield(batch) }
                if let failure { continuation.finish(throwing: failure) }
            }
        }
    }
}

/// Waits for `task` (which is not cancelled) unless this task is cancelled or `timeout` passes.
func awaitCancellable<T: Sendable>(_ task: Task<T, any Error>, timeout: Duration? = nil) async throws -> T {
    try await withOneShot(timeout: timeout) { (shot: OneShot<T>) in
        Task { shot.resolve(await task.result) }
    }
}

/// Runs clean-up in a task of its own, so it completes even when the caller was cancelled
/// (clean-up awaited inside a cancelled task would fail at once).
func runCleanup(_ work: @escaping @Sendable () async -> Void) async {
    await Task { await work() }.value
}
