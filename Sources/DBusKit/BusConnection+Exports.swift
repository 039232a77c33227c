internal import CDBus

// Exported objects: method calls to this connection answered by handlers (an agent's
// org.bluez.Agent1 object, say), and the bus names it owns.
extension BusConnection {
    /// Answers method calls to `path` with `handler` (on ``queue``, in arrival order, after
    /// the signals received before each call). Calls to paths nobody exports are answered
    /// `org.freedesktop.DBus.Error.UnknownObject`. A later export of the same path replaces
    /// this one. It takes effect before it returns: every call dispatched afterwards finds it
    /// (a closed connection ignores it).
    /// - Returns: a token for ``unexport(_:)``.
    @discardableResult
    public func export(_ path: ObjectPath, _ handler: @escaping @Sendable (Message) -> MethodReply) -> HandlerToken {
        let id = nextToken.add(1, ordering: .relaxed).newValue
        exported.add(path, id: id, handler)
        return HandlerToken(id: id)
    }

    /// Stops answering for the object exported with `token`, before it returns.
    public func unexport(_ token: HandlerToken) {
        exported.remove(id: token.id)
    }

    /// Answers a method call later: `call` is the message an exported object's handler got
    /// (and answered ``MethodReply/noReply``). Does nothing when the caller asked for no reply
    /// or the connection is closed.
    public func reply(to call: Message, _ reply: MethodReply) {
        sends.sendRequested()
        onQueueOrLater { [self] in
            send(reply, to: call)
            sendHanded()
        }
    }

    /// Sends `reply` to `call` (queue only): a method return with the values (an error
    /// `org.freedesktop.DBus.Error.Failed` if they cannot be encoded, or carry a Unix fd the
    /// connection cannot pass), or an error reply.
    private func send(_ reply: MethodReply, to call: Message) {
        guard isOpen, let caller = call.sender, call.kind == .methodCall else { return }
        let message: OpaquePointer?
        switch reply {
        case .noReply:
            return
        case .values(let values):
            do throws(BusError) { try checkDescriptorPassing(values) } catch {
                send(.error(name: "org.freedesktop.DBus.Error.Failed", message: error.description), to: call)
                return
            }
            message = dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN)
            if let message, (try? MessageEncoder.append(values, to: message)) == nil {
                dbus_message_unref(message)
                send(.error(name: "org.freedesktop.DBus.Error.Failed", message: "reply values could not be encoded"), to: call)
                return
            }
        case .error(let name, let text):
            message = dbus_message_new(CDBUS_MESSAGE_TYPE_ERROR)
            if let message {
                let valid = dbus_validate_error_name(name, nil) != 0 ? name : "org.freedesktop.DBus.Error.Failed"
                dbus_message_set_error_name(message, valid)
                if !text.utf8.contains(0) { try? MessageEncoder.append([.string(text)], to: message) }
            }
        }
        guard let message else { return }
        dbus_message_set_reply_serial(message, call.serial)
        dbus_message_set_destination(message, caller)
        dbus_message_set_no_reply(message, 1)
        dbus_connection_send(raw, message, nil)
        dbus_message_unref(message)
        observer?.observe(.answered(call, reply), at: .now)
    }

    /// Asks the bus for a well-known name (`RequestName`, flag DO_NOT_QUEUE).
    /// - Returns: whether this connection is now its primary owner.
    public func requestName(_ name: String, timeout: Duration? = nil) async throws -> Bool {
        let reply = try await call(Self.busCall("RequestName", [.string(name), .uint32(4)]), timeout: timeout)
        // 1: primary owner, 4: already the owner.
        return [1, 4].contains(reply.body.first?.integer)
    }

    /// Gives up a well-known name (`ReleaseName`).
    public func releaseName(_ name: String, timeout: Duration? = nil) async throws {
        _ = try await call(Self.busCall("ReleaseName", [.string(name)]), timeout: timeout)
    }

    func answer(_ incoming: OpaquePointer) {
        let call = MessageDecoder.decode(incoming)
        observer?.observe(.incomingCall(call), at: .now)
        let reply: MethodReply
        if let path = call.path, let handler = exported.handler(for: path) {
            reply = handler(call)
        } else {
            reply = .error(name: DBusErrorName.unknownObject, message: "no object at \(call.path?.rawValue ?? "?")")
        }
        guard dbus_message_get_no_reply(incoming) == 0 else { return }
        sends.sendRequested()
        send(reply, to: call)
        sendHanded()
    }
}

/// The objects a connection exports: path -> method-call handler; none once it is closed.
///
/// Behind a lock of its own, not confined to the connection's queue, so that an export takes
/// effect when it returns: the queue may read a call in one turn and dispatch it in a later
/// one enqueued before the export, and a call sent after the export must still find it.
final class ExportedObjects: Sendable {
    private struct State {
        var handlers: [ObjectPath: (id: UInt64, handler: @Sendable (Message) -> MethodReply)] = [:]
        var closed = false
    }
    private let state = Lock(State())

    /// Exports `path` (replacing an earlier export of it), unless closed.
    func add(_ path: ObjectPath, id: UInt64, _ handler: @escaping @Sendable (Message) -> MethodReply) {
        state.withLock { if !$0.closed { $0.handlers[path] = (id, handler) } }
    }

    /// Removes the export made with `id`.
    func remove(id: UInt64) {
        state.withLock { state in
            if let path = state.handlers.first(where: { $0.value.id == id })?.key { state.handlers[path] = nil }
        }
    }

    /// The handler answering calls to `path`.
    func handler(for path: ObjectPath) -> (@Sendable (Message) -> MethodReply)? {
        state.withLock { $0.handlers[path]?.handler }
    }

    /// Drops every export; later ones are ignored.
    func close() {
        state.withLock { $0 = State(closed: true) }
    }
}
