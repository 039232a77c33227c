import DBusKit

/// A characteristic's notifications through the socket BlueZ hands over
/// (GattCharacteristic1.AcquireNotify), inside
/// ``ConnectedDevice/withAcquiredNotifications(_:setupTimeout:_:)``.
public struct AcquiredNotifications: Sendable {
    /// The characteristic whose notifications these are.
    public let characteristic: GATTCharacteristic
    /// The ATT MTU BlueZ returned with the socket, in bytes (a value is at most MTU - 3).
    public let mtu: Int
    /// Every notified value, one datagram each, in the order the device sent them; none is
    /// dropped here (unbounded buffer). It ends with ``BLEError/disconnected(_:)`` when the
    /// link drops (BlueZ shuts the socket, or Connected goes false), with
    /// ``BLEError/unavailable(_:)`` when bluetoothd leaves or the bus is lost, and normally
    /// when the body returns.
    public let values: AsyncThrowingStream<[UInt8], any Error>
}

extension ConnectedDevice {
    /// Runs `body` with `characteristic` held for writing without response through the socket
    /// BlueZ hands over (GattCharacteristic1.AcquireWrite), and releases it (closes the
    /// socket) when `body` ends, however it ends.
    ///
    /// bluez/doc/org.bluez.GattCharacteristic.rst: AcquireWrite returns `(fd, mtu)`, a
    /// `SOCK_SEQPACKET` socket and the ATT MTU; it works for a characteristic with the
    /// `write-without-response` flag (its WriteAcquired property exists then). The socket
    /// needs a bus on a Unix socket (the system bus is one). Values still in the socket when
    /// it is closed are taken by bluetoothd first; call ``AcquiredWrite/flush(timeout:)``
    /// before ending the link.
    /// - Parameters:
    ///   - timeout: the limit for BlueZ's answer to AcquireWrite (bluetoothd may hold it until
    ///     the MTU exchange is done).
    /// - Throws: AcquireWrite's refusals as mapped by ``BLEError/from(_:during:)``:
    ///   ``BLEError/notSupported(_:_:)`` (no `write-without-response`, or no AcquireWrite),
    ///   ``BLEError/busy(_:dbusError:message:)`` (NotPermitted "Write acquired": another
    ///   client holds it), ``BLEError/notPermitted(_:dbusError:message:)``,
    ///   ``BLEError/failed(_:dbusError:message:)``; then
    ///   ``BLEError/timedOut(_:)`` (write), ``BLEError/disconnected(_:)``,
    ///   ``BLEError/protocolError(_:_:)`` (an answer without a descriptor or with an MTU
    ///   under 23), what `body` throws, `CancellationError`.
    public func withAcquiredWrite<T: Sendable>(
        _ characteristic: GATTCharacteristic, timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AcquiredWrite) async throws -> T
    ) async throws -> T {
        let acquired = try await acquireWrite(characteristic, timeout: timeout)
        defer { acquired.release() }
        return try await body(acquired)
    }

    /// Runs `body` with a writer of values without response to `characteristic`: through
    /// AcquireWrite's socket when BlueZ grants it (released when `body` ends), else, when
    /// BlueZ refuses it (NotSupported, NotPermitted, NotAuthorized, Failed, or no such
    /// method), by WriteValue with type "command" (``WithoutResponseWriter``).
    /// - Parameter timeout: the limit for BlueZ's answer to AcquireWrite.
    /// - Throws: ``BLEError/disconnected(_:)``, ``BLEError/timedOut(_:)`` (write),
    ///   ``BLEError/unavailable(_:)`` while acquiring (these are not refusals),
    ///   ``BLEError/serviceReadOnly(_:dbusError:message:)`` and
    ///   ``BLEError/busy(_:dbusError:message:)`` (NotPermitted "Write acquired": another client
    ///   holds it) (bluetoothd would refuse WriteValue as well), what `body` throws,
    ///   `CancellationError`.
    public func withWritesWithoutResponse<T: Sendable>(
        _ characteristic: GATTCharacteristic, timeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (WithoutResponseWriter) async throws -> T
    ) async throws -> T {
        let acquired: AcquiredWrite
        do {
            acquired = try await acquireWrite(characteristic, timeout: timeout)
        } catch let refusal as BLEError where Self.isRefusal(refusal) {
            return try await body(WithoutResponseWriter(characteristic: characteristic, refusal: refusal, device: self))
        }
        defer { acquired.release() }
        return try await body(WithoutResponseWriter(acquired: acquired, device: self))
    }

    /// Whether an AcquireWrite error means "not this way" (write by WriteValue instead)
    /// rather than a link, bus or time problem.
    static func isRefusal(_ error: BLEError) -> Bool {
        switch error {
        case .notSupported, .notPermitted, .failed: true
        default: false
        }
    }

    /// AcquireWrite: the socket and the MTU, wrapped.
    func acquireWrite(_ characteristic: GATTCharacteristic, timeout: Duration) async throws -> AcquiredWrite {
        let operation = device.operation(.write, service: characteristic.service, characteristic: characteristic.uuid)
        let (socket, mtu) = try await acquire("AcquireWrite", characteristic, operation: operation, timeout: timeout)
        return AcquiredWrite(characteristic: characteristic, mtu: mtu, socket: socket, operation: operation, session: session,
                             devicePath: device.path)
    }

    /// Runs `body` with the notifications of `characteristic` coming through the socket
    /// BlueZ hands over (GattCharacteristic1.AcquireNotify): one datagram per notified value,
    /// the Value property untouched. The socket is closed when `body` ends, however it ends
    /// (BlueZ then turns notifications off, unless StartNotify sessions want them).
    ///
    /// bluez/doc/org.bluez.GattCharacteristic.rst: AcquireNotify returns `(fd, mtu)`; it works
    /// for a characteristic with the `notify` flag that no client has called StartNotify on;
    /// while it is held, StartNotify answers NotPermitted "Notify acquired". The watcher of
    /// the link is in place before AcquireNotify, so a drop is never missed. The set-up is
    /// StartNotify's (ConnectedDevice+NotificationSetUp.swift): a characteristic without the
    /// `notify` flag is refused before anything is sent, and one whose object leaves while
    /// AcquireNotify is pending is found again by its UUIDs and asked at its new object
    /// (``AcquiredNotifications/characteristic`` is then the new one).
    /// - Parameter setupTimeout: the limit for BlueZ's answer to AcquireNotify.
    /// - Throws: ``BLEError/notSupported(_:_:)`` (no `notify` flag, no AcquireNotify, or the
    ///   characteristic not found again),
    ///   ``BLEError/busy(_:dbusError:message:)`` (NotPermitted "Notify acquired": another
    ///   client holds it; InProgress: a StartNotify session exists),
    ///   ``BLEError/timedOut(_:)`` (notification setup), ``BLEError/disconnected(_:)``,
    ///   ``BLEError/protocolError(_:_:)``, what `body` throws, `CancellationError`.
    public func withAcquiredNotifications<T: Sendable>(
        _ characteristic: GATTCharacteristic, setupTimeout: Duration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AcquiredNotifications) async throws -> T
    ) async throws -> T {
        let operation = device.operation(.notificationSetup, service: characteristic.service, characteristic: characteristic.uuid)
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        let ending = finishingOnLinkLoss(continuation, of: characteristic)
        defer {
            session.removeWatcher(ending)
            continuation.finish()
        }
        let (found, reply) = try await turnOnNotifications(characteristic, by: .acquireNotify, deadline: .now + setupTimeout)
        let (socket, mtu) = try Self.socket(from: reply, of: NotifyMethod.acquireNotify.member, operation: operation)
        defer { socket.close() }
        let session = session
        socket.receive(maximumLength: max(mtu, 517), onDatagrams: { datagrams in
            for datagram in datagrams { continuation.yield(datagram) }
        }, onEnd: { failure in
            switch failure {
            case .hungUp: continuation.finish(throwing: session.isBlueZAvailable ? BLEError.disconnected(operation) : BLEError.unavailable(.bluezLeft))
            case .closed, .timedOut: continuation.finish()
            case .system(let code): continuation.finish(throwing: BLEError.protocolError(operation, "the acquired socket failed: errno \(code)"))
            }
        })
        return try await body(AcquiredNotifications(characteristic: found, mtu: mtu, values: stream))
    }

    /// Calls AcquireWrite (`member`) and takes the socket out of the reply. A reply nobody
    /// takes (a timeout or cancellation that won the race) closes its descriptor by itself
    /// (``UnixFileDescriptor``).
    private func acquire(_ member: String, _ characteristic: GATTCharacteristic, operation: BLEOperation,
                         timeout: Duration) async throws -> (SeqPacketSocket, Int) {
        let call = BlueZ.call(characteristic.path, BlueZ.gattCharacteristicInterface, member, [.stringVariantDictionary([:])])
        let reply = try await session.call(call, operation: operation, timeout: timeout, abortIf: device.linkLost(during: operation))
        return try Self.socket(from: reply, of: member, operation: operation)
    }

    /// The socket and the ATT MTU of an AcquireWrite or AcquireNotify (`member`) reply.
    /// - Throws: ``BLEError/protocolError(_:_:)`` for a reply without a descriptor or with an
    ///   MTU under 23.
    static func socket(from reply: Message?, of member: String, operation: BLEOperation) throws -> (SeqPacketSocket, Int) {
        guard let reply, reply.body.count == 2, let descriptor = reply.body[0].unixFD, case .uint16(let mtu) = reply.body[1], mtu >= 23 else {
            let answer = reply.map { "(\($0.signature)) \($0.body.map { "\($0)" }.joined(separator: ", "))" } ?? "nothing"
            throw BLEError.protocolError(operation, "\(member) answered \(answer): want a descriptor and an MTU of 23 or more")
        }
        do {
            return (try SeqPacketSocket(taking: descriptor), Int(mtu))
        } catch {
            throw BLEError.protocolError(operation, "\(member) answered without a file descriptor (is the bus on a Unix socket?)")
        }
    }
}
