import DBusKit

extension Adapter {
    /// The life of an object this process exports and registers with one of the adapter's
    /// managers (an advertisement with LEAdvertisingManager1, a GATT application with
    /// GattManager1): sends `register` (bluetoothd reads the object back before it answers),
    /// runs `body`, then sends `unregister` unless `isStillRegistered` says bluetoothd
    /// dropped it or bluetoothd is gone, and finally calls `stopExporting`: on every way
    /// out, `body` throwing or the task cancelled included (the call is sent anyway). A
    /// `register` given up on (its timeout, cancellation) may still be carried out, so it
    /// is undone too.
    /// - Parameters:
    ///   - unregisterTimeout: how long clean-up waits for the reply after a body that ended
    ///     normally; after a failure or an interruption, ``CleanupPolicy/interruptedTimeout``.
    ///   - registrationError: what a failed `register` throws, from its error.
    /// - Throws: `registrationError` of what `register` threw; what `body` throws. Clean-up
    ///   failures are not thrown.
    func withRegistration<T: Sendable>(
        register: MethodCall, unregister: MethodCall, operation: BLEOperation, timeout: Duration, unregisterTimeout: Duration,
        registrationError: (any Error) -> any Error,
        isStillRegistered: () -> Bool = { true }, stopExporting: () -> Void,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async throws -> T {
        do {
            _ = try await session.call(register, operation: operation, timeout: timeout)
        } catch {
            if Session.mayHaveBeenCarriedOut(despite: error) {
                await session.cleanupCall(unregister, waitingUpTo: CleanupPolicy.interruptedTimeout)
            }
            stopExporting()
            throw registrationError(error)
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        if isStillRegistered() && session.isBlueZAvailable {
            let succeeded = (try? result.get()) != nil && !Task.isCancelled
            await session.cleanupCall(unregister, waitingUpTo: succeeded ? unregisterTimeout : CleanupPolicy.interruptedTimeout)
        }
        stopExporting()
        return try result.get()
    }
}
