import DBusKit

/// A characteristic held for writing without response through the socket BlueZ hands over
/// (GattCharacteristic1.AcquireWrite, bluez/doc/org.bluez.GattCharacteristic.rst), inside
/// ``ConnectedDevice/withAcquiredWrite(_:timeout:_:)``.
///
/// Each ``write(_:timeout:)`` is one datagram on a `SOCK_SEQPACKET` socket, which bluetoothd
/// sends as one ATT Write Command: a value is at most ``maximumValueLength`` (MTU - 3, and
/// 512 at most) bytes.
/// The socket's fullness is the link's back-pressure: a write waits for room (POLLOUT),
/// never drops a value and never spins. While the characteristic is held, BlueZ answers
/// WriteValue on it with NotPermitted "Write acquired", to every client. The link dropping
/// shuts the socket (the next write fails with ``BLEError/disconnected(_:)``); after a
/// reconnection the characteristic must be acquired anew. The characteristic's object
/// leaving with the link up (the device changed its GATT database) shuts it too: the next
/// write fails with ``BLEError/outcomeUnknown(_:_:)``, since values still in the socket may
/// or may not have reached the device.
///
/// Write from one task at a time to keep the values in order (concurrent writes each go
/// out whole, in no guaranteed order).
public final class AcquiredWrite: Sendable {
    /// The characteristic held.
    public let characteristic: GATTCharacteristic
    /// The ATT MTU BlueZ returned with the socket, in bytes (at least 23).
    public let mtu: Int
    let socket: SeqPacketSocket
    let operation: BLEOperation
    let session: Session
    /// The device's object (Device1), whose Connected property tells a link loss.
    let devicePath: ObjectPath

    /// How long after BlueZ shut the socket its cause is waited for in the signals: the
    /// link's Connected false and the characteristic's InterfacesRemoved may come after the
    /// hang-up is seen.
    static let hangUpCauseWait: Duration = .seconds(1)

    init(characteristic: GATTCharacteristic, mtu: Int, socket: SeqPacketSocket, operation: BLEOperation, session: Session,
         devicePath: ObjectPath) {
        self.characteristic = characteristic
        self.mtu = mtu
        self.socket = socket
        self.operation = operation
        self.session = session
        self.devicePath = devicePath
    }

    /// The longest value one write carries: MTU - 3 bytes (an ATT Write Command spends 3 on
    /// its opcode and handle; bluetoothd forwards each datagram as one), and 512 at most (the
    /// longest attribute value; bluetoothd 5.66 reads each datagram into 512 bytes and cuts
    /// a longer one short): see ``ATT/maximumWriteWithoutResponseLength(mtu:)``.
    public var maximumValueLength: Int { ATT.maximumWriteWithoutResponseLength(mtu: mtu) }

    /// How many writes so far found the socket full and waited for room (back-pressure).
    public var waitsForRoom: Int { socket.waitsForRoom }

    /// Writes `value` as one ATT Write Command (one datagram), waiting while the socket is
    /// full. Returns once the value is in the socket: no acknowledgement comes, that is what
    /// "without response" means (see ``flush(timeout:)``).
    /// - Parameters:
    ///   - value: 0 to ``maximumValueLength`` bytes.
    ///   - timeout: the longest wait for room: a link that takes nothing for this long is
    ///     stalled; nil waits without a limit.
    /// - Throws: ``BLEError/notSupported(_:_:)`` for a value longer than
    ///   ``maximumValueLength`` (nothing is sent), ``BLEError/disconnected(_:)`` when BlueZ has
    ///   shut the socket because the link dropped, ``BLEError/outcomeUnknown(_:_:)`` when it
    ///   did because the characteristic's object left with the link up (values written before
    ///   may or may not have reached the device), ``BLEError/unavailable(_:)`` when bluetoothd
    ///   left, ``BLEError/timedOut(_:)`` (write) when no room came within `timeout`,
    ///   ``BLEError/protocolError(_:_:)`` after ``release()`` or for an unexpected `errno`,
    ///   `CancellationError` (the wait ends at once).
    public func write(_ value: [UInt8], timeout: Duration?) async throws {
        guard value.count <= maximumValueLength else {
            throw BLEError.notSupported(operation, "a value of \(value.count) bytes: a write without response carries at most \(maximumValueLength) (MTU \(mtu) - 3, at most 512)")
        }
        do {
            try await socket.send(value, timeout: timeout)
        } catch let failure as SeqPacketSocket.Failure {
            throw try await error(for: failure)
        }
    }

    /// Waits until bluetoothd has taken every value written from the socket (its queue
    /// empty: TIOCOUTQ 0, looked at every 2 ms), so that what was written is in BlueZ's hands
    /// before the socket is closed or the link taken down.
    /// - Parameter timeout: the limit; nil waits without one.
    /// - Throws: ``BLEError/disconnected(_:)`` when the socket is shut first (values still
    ///   queued are lost with the link; ``BLEError/outcomeUnknown(_:_:)`` when it was shut
    ///   because the characteristic's object left), ``BLEError/timedOut(_:)`` (write),
    ///   `CancellationError`.
    public func flush(timeout: Duration?) async throws {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if socket.hasHungUp() { throw try await error(for: socket.isClosed ? .closed : .hungUp) }
            guard let unread = socket.unreadBytes() else { throw try await error(for: .closed) }
            if unread == 0 { return }
            if let deadline, ContinuousClock.now >= deadline { throw BLEError.timedOut(operation) }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Closes the socket: BlueZ releases the characteristic (WriteAcquired false) when it
    /// sees it closed, after taking what is still queued. Done by
    /// ``ConnectedDevice/withAcquiredWrite(_:timeout:_:)`` when its body ends; later writes
    /// fail. Idempotent.
    public func release() { socket.close() }

    func error(for failure: SeqPacketSocket.Failure) async throws -> BLEError {
        switch failure {
        case .hungUp: try await hangUpCause()
        case .timedOut: .timedOut(operation)
        case .closed: .protocolError(operation, "the acquired socket is closed (released)")
        case .system(let code): .protocolError(operation, "the acquired socket failed: \(String(cString: strerror(code)))")
        }
    }

    /// Why BlueZ shut the socket, from the signals around the hang-up (waited for up to
    /// ``hangUpCauseWait``): the link dropped (Device1.Connected false), the characteristic's
    /// object left with the link up (a Service Changed: bluetoothd closes the acquired socket
    /// with the object), or bluetoothd left. Neither seen in time: the link, as before.
    /// - Throws: `CancellationError`.
    private func hangUpCause() async throws -> BLEError {
        let operation = operation, devicePath = devicePath, path = characteristic.path
        let what = "characteristic \(characteristic.uuid.named)"
        do {
            return try await session.wait(for: operation, timeout: Self.hangUpCauseWait) { cache, _ -> WaitStep<BLEError> in
                if cache.property("Connected", of: devicePath, on: BlueZ.deviceInterface)?.bool != true {
                    return .done(.disconnected(operation, reason: cache.disconnectReason(of: devicePath)))
                }
                if cache[path, BlueZ.gattCharacteristicInterface] == nil {
                    return .done(.outcomeUnknown(operation, "\(what) left with the link up while its acquired socket was "
                        + "written to (the device changed its GATT database): whether the device took the values still "
                        + "in the socket is unknown, so they were not written again"))
                }
                return .keepWaiting
            }
        } catch BLEError.timedOut(operation) {
            return .disconnected(operation)
        } catch let error as BLEError {
            return error    // bluetoothd or the bus gone, naming the operation
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
