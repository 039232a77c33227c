import Dispatch
internal import CDBus

// Method calls, signals emitted and flush(within:): what a BusConnection sends.
extension BusConnection {
    /// Sends a method call; `replyHandler` runs once on ``queue`` with the reply, the error
    /// reply as ``BusError/errorReply(name:message:)``, or ``BusError/disconnected`` — unless
    /// the returned ``PendingReply`` is cancelled first.
    @discardableResult
    public func send(_ call: MethodCall, replyHandler: @escaping @Sendable (Result<Message, BusError>) -> Void) -> PendingReply {
        let pending = PendingReply(connection: self)
        replies.callSent()
        sends.sendRequested()
        queue.async { [self] in
            defer { sendHanded() }
            guard isOpen else {
                replies.settled()
                observer?.observe(.callNotSent(call, .disconnected), at: .now)
                replyHandler(.failure(.disconnected))
                return
            }
            let message: OpaquePointer
            do throws(BusError) {
                try checkDescriptorPassing(call.arguments)
                message = try MessageEncoder.methodCall(call)
            } catch {
                replies.settled()
                observer?.observe(.callNotSent(call, error), at: .now)
                replyHandler(.failure(error))
                return
            }
            defer { dbus_message_unref(message) }
            var serial: UInt32 = 0
            guard dbus_connection_send(raw, message, &serial) != 0 else {
                replies.settled()
                observer?.observe(.callNotSent(call, .outOfMemory), at: .now)
                replyHandler(.failure(.outOfMemory))
                return
            }
            pending.serial = serial
            replyHandlers[serial] = replyHandler
            // The read thread fell asleep after the turn it last ran (a signal stream) without
            // this call: woken, it reads the reply as soon as it comes (ReplyWatch).
            if replies.isSleeping { mainLoop.interruptPollerSleep() }
            if let observer {
                let now = ContinuousClock.now
                callTimes[serial] = now
                observer.observe(.call(call, serial: serial, expectsReply: true), at: now)
            }
        }
        return pending
    }

    /// Emits the signals, in order, back to back (a receiver reading them together gets them
    /// in one batch).
    /// - Throws: ``BusError/invalidArgument(_:)`` (checked before anything is sent),
    ///   ``BusError/disconnected``, ``BusError/outOfMemory``.
    public func emit(_ signals: [Signal]) async throws {
        var encoded = [UncheckedBox<OpaquePointer>]()
        for signal in signals {
            do throws(BusError) { encoded.append(UncheckedBox(try MessageEncoder.signal(signal))) } catch {
                for message in encoded { dbus_message_unref(message.value) }
                throw error
            }
        }
        let sent = encoded
        let arguments = signals.flatMap(\.arguments)
        let result: Result<Void, BusError> = await withCheckedContinuation { continuation in
            sends.sendRequested()
            queue.async { [self] in
                defer {
                    for message in sent { dbus_message_unref(message.value) }
                    sendHanded()
                }
                guard isOpen else { continuation.resume(returning: .failure(.disconnected)); return }
                do throws(BusError) { try checkDescriptorPassing(arguments) } catch {
                    continuation.resume(returning: .failure(error))
                    return
                }
                for (index, message) in sent.enumerated() {
                    guard dbus_connection_send(raw, message.value, nil) != 0 else {
                        continuation.resume(returning: .failure(.outOfMemory))
                        return
                    }
                    observer?.observe(.emitted(signals[index]), at: .now)
                }
                continuation.resume(returning: .success(()))
            }
        }
        try result.get()
    }

    /// Sends a method call flagged no-reply-expected (fire and forget).
    public func sendNoReply(_ call: MethodCall) {
        sends.sendRequested()
        queue.async { [self] in
            defer { sendHanded() }
            guard isOpen, (try? checkDescriptorPassing(call.arguments)) != nil,
                  let message = try? MessageEncoder.methodCall(call) else {
                observer?.observe(.callNotSent(call, isOpen ? .invalidArgument("not encodable") : .disconnected), at: .now)
                return
            }
            defer { dbus_message_unref(message) }
            dbus_message_set_no_reply(message, 1)
            var serial: UInt32 = 0
            if dbus_connection_send(raw, message, &serial) != 0 {
                observer?.observe(.call(call, serial: serial, expectsReply: false), at: .now)
            }
        }
    }

    /// Calls a method and waits for its reply.
    /// - Parameter timeout: how long to wait for the reply; nil waits until the reply, the
    ///   cancellation of the task or the loss of the connection.
    /// - Returns: the method return message.
    /// - Throws: ``BusError`` (`errorReply`, `timedOut`, `disconnected`, `invalidArgument`), or
    ///   `CancellationError`. A late reply after a timeout or cancellation is dropped.
    public func call(_ call: MethodCall, timeout: Duration? = nil) async throws -> Message {
        try await withOneShot(timeout: timeout) { (shot: OneShot<Message>) in
            let pending = send(call) { result in shot.resolve(result.mapError { $0 }) }
            shot.onFinish { pending.cancel() }
        }
    }

    /// Waits until everything sent before it has been handed to libdbus (the connection's
    /// queue has reached it) and written to the socket, the connection is closed or lost, or
    /// `limit` passes while the socket takes nothing (a stalled daemon that reads nothing).
    /// The limit counts from the moment the queue reaches the flush, not from the call: a
    /// queue busy with a flood of incoming signals delays it, but a call sent before it is
    /// never left unsent (a process that exits after clean-up used to leave its Disconnect
    /// unsent when its queue was busy past the limit). Never blocks a thread: the writing is
    /// done by the connection's write watch.
    /// - Returns: whether the outgoing queue was empty.
    /// Not cancellable: it is clean-up's last step.
    @discardableResult
    public func flush(within limit: Duration) async -> Bool {
        // Everything asked for was handed to libdbus, and libdbus then had nothing left to
        // write: nothing to wait for, and no turn of the queue to wait for it.
        if nothingUnsent { return true }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let waiter = FlushWaiter(continuation)
            queue.async { [self] in
                if !isOpen || dbus_connection_has_messages_to_send(raw) == 0 {
                    waiter.resume(flushed: true)
                } else {
                    let timer = OneShotTimer.schedule(after: limit) { waiter.resume(flushed: false) }
                    waiter.onResume { timer.cancel() }
                    sends.wait(waiter)
                }
            }
        }
    }

    /// Whether every send asked for has been handed to libdbus and written (from any thread).
    package var nothingUnsent: Bool { sends.nothingUnsent }

    /// A send asked for has been handed to libdbus, or dropped (queue only).
    func sendHanded() {
        sends.sendHanded(libdbusIdle: !tornDown && dbus_connection_has_messages_to_send(raw) == 0)
    }

    /// Records that what was handed to libdbus has been written, if libdbus has nothing left
    /// to write (queue only; nothing once libdbus's side is torn down).
    func noteWritten() {
        guard !tornDown, dbus_connection_has_messages_to_send(raw) == 0 else { return }
        sends.allWritten()
    }

    /// Resumes ``flush(within:)`` callers once nothing waits to be written (queue only).
    func resumeFlushWaiters() {
        guard sends.hasWaiters, !isOpen || dbus_connection_has_messages_to_send(raw) == 0 else { return }
        sends.resumeWaiters()
    }

    /// Throws when `values` hold a Unix file descriptor and this connection cannot pass one
    /// (libdbus would drop such a message silently: `dbus_connection_send` refuses it). Queue only.
    func checkDescriptorPassing(_ values: [DBusValue]) throws(BusError) {
        guard values.contains(where: \.containsUnixFD), dbus_connection_can_send_type(raw, CDBUS_TYPE_UNIX_FD) == 0 else { return }
        throw .invalidArgument("this connection cannot pass Unix file descriptors (only a bus on a Unix socket can)")
    }

    fileprivate func cancelReply(serial: UInt32) {
        if replyHandlers.removeValue(forKey: serial) != nil { replies.settled() }
    }
}

/// A call sent with ``BusConnection/send(_:replyHandler:)``; cancelling it drops the reply
/// handler (D-Bus has no cancel on the wire: the peer still runs the call).
public final class PendingReply: @unchecked Sendable {
    private weak var connection: BusConnection?
    /// Set on the connection's queue by the send; read there by `cancel`.
    fileprivate var serial: UInt32 = 0

    fileprivate init(connection: BusConnection) { self.connection = connection }

    public func cancel() {
        guard let connection else { return }
        connection.queue.async { [self] in
            if serial != 0 { connection.cancelReply(serial: serial) }
        }
    }
}
