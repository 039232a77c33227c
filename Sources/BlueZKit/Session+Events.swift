import DBusKit

extension Session {
    /// Every event of this session, as an async sequence: signals from bluetoothd with the
    /// values they carried, in bus order, and bluetoothd or the bus coming and going (see
    /// ``SessionEvent``). Signals from other bus clients never appear.
    ///
    /// The stream starts with the events after this call (read the current state with
    /// ``withCache(_:)``); it ends after ``SessionEvent/busLost`` (the bus lost, or
    /// ``close()``), or when the consumer stops iterating (its watcher is then removed).
    /// - Parameter bufferingPolicy: what to keep while the consumer is behind; the default
    ///   keeps every event (a slow consumer costs memory, never an event).
    public func events(
        bufferingPolicy: AsyncStream<SessionEvent>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: bufferingPolicy)
        let id = addWatcher { _, event in
            guard let event else { return nil }
            return {
                continuation.yield(event)
                if event.isBusLost { continuation.finish() }
            }
        }
        continuation.onTermination = { [weak self] _ in self?.removeWatcher(id) }
        return stream
    }
}
