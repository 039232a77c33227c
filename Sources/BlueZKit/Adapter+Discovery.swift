import DBusKit

extension Adapter {
    /// The Device1 properties whose change means the device was heard during this scan.
    static let sightingProperties: Set<String> = ["RSSI", "ManufacturerData", "ServiceData", "TxPower"]
    /// Advertising data that may complete a device already heard during this scan: the kernel
    /// can report an advertisement and its scan response (which often carries the service
    /// UUIDs or the name) separately, so a device first seen without them gets them as a
    /// later change; the filters are checked again then.
    static let advertisingDataProperties: Set<String> = ["UUIDs", "Name"]
    /// The two sets as bits of the packed record's known names (all of them are Device1's).
    private static let sightingMask = PackedProperties.knownMask(sightingProperties)
    private static let advertisingDataMask = PackedProperties.knownMask(advertisingDataProperties)

    /// Runs `body` while this adapter discovers LE devices, then stops discovery.
    ///
    /// The discovery is shared by every user of this session on this adapter (concurrent
    /// calls, ``Device/find(_:on:timeout:)``, a connect that scans): bluetoothd allows one
    /// discovery per client (bluez/doc/org.bluez.Adapter.rst StartDiscovery), so the first
    /// user starts it, later users join it, and the last to leave stops it; concurrent users
    /// never fail busy. The first user sets the discovery filter (Transport "le", DuplicateData
    /// explicit, an RSSI floor: see ``DiscoveryFilter``), then StartDiscovery (an
    /// `org.bluez.Error.InProgress` answer is retried once after 200 ms; a StartDiscovery still
    /// unanswered ``CleanupPolicy/unansweredStartGrace`` after the adapter started discovering
    /// is taken as started, see there). A user joining with a filter that asks for more (a
    /// lower RSSI floor, DuplicateData) widens the discovery's filter to the merge of both, as
    /// bluetoothd merges its clients' filters (SetDiscoveryFilter again); the filter is not
    /// narrowed again until the discovery stops. A failed start fails every user waiting for it.
    ///
    /// `body` gets a stream of batches of devices *seen during this scan* (added, or a change
    /// of RSSI, ManufacturerData, ServiceData or TxPower; then also a change of UUIDs or Name,
    /// as a scan response completes the advertisement) that pass `filter`, checked here
    /// because the discovery's filter is the merge of all its users' (and bluetoothd merges
    /// those of all clients). Devices only cached from earlier are never reported.
    ///
    /// The stream ends with an error when the adapter powers off or goes away
    /// (``BLEError/unavailable(_:)``) or bluetoothd leaves the bus. When `body` returns or
    /// throws, or the task is cancelled, this user leaves the discovery; the other users' scan
    /// goes on. The last user to leave sends StopDiscovery, after the StartDiscovery reply if
    /// that was still pending (waited for up to ``CleanupPolicy/pendingStartTimeout``), under
    /// ``CleanupPolicy/interruptedTimeout``; its errors (NotReady, "No discovery started",
    /// InProgress) are dropped and never replace the result. A StartDiscovery answered only
    /// after that wait still gets its StopDiscovery, in the background, when the reply comes.
    /// - Parameters:
    ///   - filter: what to report.
    ///   - setupTimeout: the limit for SetDiscoveryFilter and StartDiscovery (or for the
    ///     discovery this user joins to be started).
    /// - Throws: ``BLEError/busy(_:dbusError:message:)`` when discovery stays InProgress
    ///   (another process's use of this bus connection), ``BLEError/unavailable(_:)``,
    ///   ``BLEError/failed(_:dbusError:message:)``, ``BLEError/timedOut(_:)``, what `body`
    ///   throws, `CancellationError`.
    public func withDiscovery<T: Sendable>(
        filter: DiscoveryFilter, setupTimeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncThrowingStream<[Advertisement], any Error>) async throws -> T
    ) async throws -> T {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [Advertisement].self)
        let watcher = session.addWatcher(discoveryWatcher(filter: filter, continuation: continuation))
        let membership = session.discoveries.join(path, on: session, filter: filter, setupTimeout: setupTimeout)
        let start = membership.start
        var result: Result<T, any Error>
        var answered = true
        var lateStart: Task<Void, Never>?
        do {
            answered = try await awaitStartDiscovery(start, setupTimeout: setupTimeout)
            if !answered {
                // Taken as started without its reply: should the reply still come as an error,
                // the scan ends with it (it was another client's discovery we heard).
                lateStart = Task {
                    if case .failure(let error) = await start.result, Self.isLateStartFailure(error) {
                        continuation.finish(throwing: error)
                    }
                }
            }
            if let update = membership.filterUpdate { try await awaitCancellable(update) }
            result = .success(try await body(stream))
        } catch {
            result = .failure(error)
        }
        lateStart?.cancel()
        session.removeWatcher(watcher)
        continuation.finish()
        // A start left unanswered stays so (BlueZ answers StopDiscovery InProgress until
        // then); closing the bus connection ends that session, so do not wait long for it.
        // At least ``CleanupPolicy/wireTime``, so that a start already answered is seen as such.
        let startWait = max(CleanupPolicy.budget(answered ? CleanupPolicy.pendingStartTimeout : CleanupPolicy.interruptedTimeout),
                            CleanupPolicy.wireTime)
        var startFailure = await session.discoveries.leave(membership, on: session, waitingForStartUpTo: startWait)
        // A start taken as begun that then failed: the scan reports that failure, not success.
        if !answered, case .success = result {
            if startFailure == nil, case .failure(let error) = await runCleanup({ await Self.outcome(of: start, within: startWait) }) {
                startFailure = error
            }
            if let startFailure, Self.isLateStartFailure(startFailure) { result = .failure(startFailure) }
        }
        return try result.get()
    }

    /// How `start` ended, or the failure to see it end within `limit`.
    private static func outcome(of start: Task<Void, any Error>, within limit: Duration) async -> Result<Void, any Error> {
        do {
            try await awaitCancellable(start, timeout: limit)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Whether `error`, from a StartDiscovery taken as begun without its reply, is BlueZ
    /// refusing it (which ends the scan): not our own wait giving up (a timeout: BlueZ 5.66
    /// may never answer it, see ``CleanupPolicy/unansweredStartGrace``) or a cancellation.
    static func isLateStartFailure(_ error: any Error) -> Bool {
        guard let error = error as? BLEError else { return false }
        if case .timedOut = error { return false }
        return true
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

    /// What one scan's watcher keeps between events.
    private struct ScanState {
        /// Devices heard during this scan.
        var heard = Set<ObjectPath>()
        /// Advertisements of the current batch not yet yielded.
        var pending = [Advertisement]()
        /// The stream has been finished.
        var ended = false
        /// With DuplicateData: each heard device's typed Device1 properties (those an
        /// Advertisement reads), every change of the device folded in as the cache folds it, so that a sighting reads only what
        /// changed instead of the whole device again. Dropped when the device is added again
        /// or removed, or the cache reloaded: never other than the cache.
        var records = [ObjectPath: DeviceProperties]()
    }

    /// Turns events into advertisements: each built from the cache as it was right after the
    /// event that made it (so two RSSI values in one batch are two advertisements, each with
    /// its own value), yielded as one array per batch of messages.
    private func discoveryWatcher(filter: DiscoveryFilter, continuation: AsyncThrowingStream<[Advertisement], any Error>.Continuation) -> Session.Watcher {
        let adapterPath = path
        let adapterName = name
        let scan = Lock(ScanState())
        // Only a scan that reports repeated sightings keeps records (their memory is spent
        // where the rebuilds would be).
        let keepsRecords = filter.duplicateData
        return { cache, event in
            guard let event else { return nil }
            var sighted: ObjectPath?
            var failure: BLEError?
            switch event {
            case .added(let path, let interfaces):
                if interfaces[BlueZ.deviceInterface] != nil, path.isChild(of: adapterPath) { sighted = path }
            case .changed(let path, BlueZ.deviceInterface, let changed, _) where path.isChild(of: adapterPath):
                if changed.packed.hasAnyKnown(Adapter.sightingMask)
                    || (changed.packed.hasAnyKnown(Adapter.advertisingDataMask) && scan.withLock { $0.heard.contains(path) }) {
                    sighted = path
                }
            case .changed(adapterPath, BlueZ.adapterInterface, let changed, _):
                if changed["Powered"]?.bool == false {
                    failure = .unavailable(cache.unavailability(ofAdapter: adapterPath, named: adapterName) ?? .poweredOff(adapterName),
                                           during: BLEOperation(.discovery))
                }
            case .removed(adapterPath, let interfaces) where interfaces.contains(BlueZ.adapterInterface):
                failure = .unavailable(.adapterRemoved(adapterName), during: BLEOperation(.discovery))
            case .bluezVanished, .busLost:
                failure = event.unavailability?.during(BLEOperation(.discovery))
            default:
                break
            }
            return scan.withLock { state -> (@Sendable () -> Void)? in
                guard !state.ended else { return nil }
                var advertisement: Advertisement?
                if keepsRecords, !state.records.isEmpty {
                    advertisement = Self.updateRecords(after: event, in: &state.records, reading: sighted)
                }
                // A sighting folded into its record above was heard before; any other is read
                // from the cache.
                if let sighted, advertisement == nil {
                    state.heard.insert(sighted)
                    if keepsRecords {
                        if let device = cache[sighted, BlueZ.deviceInterface] {
                            let record = DeviceProperties(advertisementIn: device.packed)
                            state.records[sighted] = record
                            advertisement = Advertisement(path: sighted, advertised: record)
                        }
                    } else {
                        advertisement = cache.advertisement(at: sighted)
                    }
                }
                if let failure {
                    state.ended = true
                    let batch = state.pending
                    state.pending.removeAll()
                    return {
                        if !batch.isEmpty { continuation.yield(batch) }
                        continuation.finish(throwing: failure)
                    }
                }
                guard let advertisement, filter.matches(advertisement) else { return nil }
                state.pending.append(advertisement)
                // One action per batch yields everything the batch added (actions run after it).
                guard state.pending.count == 1 else { return nil }
                return {
                    let batch = scan.withLock { state in
                        defer { state.pending.removeAll() }
                        return state.pending
                    }
                    if !batch.isEmpty { continuation.yield(batch) }
                }
            }
        }
    }

    /// Keeps the records as the cache is after `event`: a change of a device's Device1 is
    /// folded into its record; a device added again or removed, or the cache reloaded, drops
    /// its record (read again from the cache when next heard).
    /// - Returns: the advertisement of the record the change was folded into, when that is
    ///   the device `sighted`.
    private static func updateRecords(after event: SessionEvent, in records: inout [ObjectPath: DeviceProperties],
                                      reading sighted: ObjectPath?) -> Advertisement? {
        switch event {
        case .changed(let path, BlueZ.deviceInterface, let changed, let invalidated):
            guard let i = records.index(forKey: path) else { return nil }
            records.values[i].foldAdvertisement(changed, invalidated: invalidated)
            return path == sighted ? Advertisement(path: path, advertised: records.values[i]) : nil
        case .added(let path, let interfaces) where interfaces[BlueZ.deviceInterface] != nil:
            records[path] = nil
        case .removed(let path, let interfaces) where interfaces.contains(BlueZ.deviceInterface):
            records[path] = nil
        case .loaded, .bluezAppeared, .bluezVanished, .busLost:
            records.removeAll()
        default:
            break
        }
        return nil
    }
}

/// Waits for `task` (which is not cancelled) unless this task is cancelled or `timeout` passes.
func awaitCancellable<T: Sendable>(_ task: Task<T, any Error>, timeout: Duration? = nil) async throws -> T {
    try await withOneShot(timeout: timeout) { (shot: OneShot<T>) in
        Task { shot.resolve(await task.result) }
    }
}
