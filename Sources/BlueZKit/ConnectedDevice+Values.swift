import DBusKit

/// Reading and writing attribute values: GattCharacteristic1 and GattDescriptor1 ReadValue and
/// WriteValue (bluez/doc/org.bluez.GattCharacteristic.rst, org.bluez.GattDescriptor.rst).
///
/// One operation runs per attribute at a time (others wait their turn within their timeout);
/// an InProgress answer (another client's operation) is retried within the timeout; a failure
/// that comes with the link dropping is ``BLEError/disconnected(_:)``.
extension ConnectedDevice {
    /// How a value is written (GattCharacteristic1.WriteValue option "type").
    public enum WriteType: String, Sendable {
        /// Write with response (ATT Write Request): needs the `write` flag.
        case request
        /// Write without response (ATT Write Command): needs the `write-without-response` flag.
        case command

        /// The characteristic flag that allows this type of write.
        public var requiredFlag: String {
            switch self {
            case .request: "write"
            case .command: "write-without-response"
            }
        }
    }

    /// Reads a characteristic's value (GattCharacteristic1.ReadValue).
    ///
    /// The Value change BlueZ signals after the reply is not delivered as a notification
    /// (see ``withNotifications(_:setupTimeout:onValue:_:)``). When the characteristic's
    /// object leaves while the read is pending (the device changed its GATT database: BlueZ
    /// never answers it) or is gone already, the read is sent again to the characteristic's
    /// new object, found by its UUIDs within `timeout` (ConnectedDevice+ServiceChanged.swift).
    /// - Parameters:
    ///   - offset: where the read starts in the value, in bytes (ReadValue option `offset`,
    ///     uint16); 0 (the default) reads from the start. BlueZ reads the rest of the value
    ///     from there (ATT Read Blob requests).
    ///   - timeout: the limit for the whole read, the wait for our turn included.
    /// - Returns: the value bytes (from `offset` on).
    /// - Throws: ``BLEError/notSupported(_:_:)`` when the characteristic's flags do not allow
    ///   reading (``GATTCharacteristic/isReadable``; nothing is sent: bluetoothd would send the
    ///   request whatever the flags say) or the
    ///   device answered ATT Read Not Permitted; ``BLEError/notPermitted(_:dbusError:message:)``
    ///   when it wants pairing or encryption first (NotPermitted "Not paired", NotAuthorized);
    ///   ``BLEError/timedOut(_:)`` (read, naming service and characteristic),
    ///   ``BLEError/disconnected(_:)``, ``BLEError/failed(_:dbusError:message:)`` (an offset past
    ///   the end: InvalidArguments "Invalid offset"), `CancellationError`.
    public func read(_ characteristic: GATTCharacteristic, offset: UInt16 = 0, timeout: Duration) async throws -> [UInt8] {
        try require(characteristic, oneOf: GATTCharacteristic.readFlags, for: .read, "be read")
        let operation = device.operation(.read, service: characteristic.service, characteristic: characteristic.uuid)
        let session = session
        let deadline = ContinuousClock.now + timeout
        let what = "characteristic \(characteristic.uuid.shortString) in service \(characteristic.service.shortString)"
        return try await following(characteristic, what: what, deadline: deadline, operation: operation, mayRepeat: true,
                                   find: finder(for: characteristic)) { current in
            let path = current.path
            return try await readValue(at: path, interface: BlueZ.gattCharacteristicInterface, offset: offset,
                                       operation: operation, timeout: deadline - .now) { value in
                session.expectReadMirror(of: value, at: offset, on: path)
            }
        }
    }

    /// Reads a descriptor's value (GattDescriptor1.ReadValue), as
    /// ``read(_:offset:timeout:)`` reads a characteristic's; errors name the descriptor, its
    /// characteristic and service. BlueZ exports no flags for a remote descriptor, so nothing
    /// is checked before the request.
    /// - Parameters:
    ///   - offset: where the read starts, in bytes (option `offset`, uint16); default 0.
    ///   - timeout: the limit for the whole read.
    /// - Returns: the value bytes (from `offset` on).
    /// - Throws: ``BLEError/notSupported(_:_:)`` (ATT Read Not Permitted),
    ///   ``BLEError/notPermitted(_:dbusError:message:)``, ``BLEError/timedOut(_:)``,
    ///   ``BLEError/disconnected(_:)``, ``BLEError/failed(_:dbusError:message:)``, `CancellationError`.
    public func read(_ descriptor: GATTDescriptor, offset: UInt16 = 0, timeout: Duration) async throws -> [UInt8] {
        let operation = device.operation(.read, service: descriptor.service, characteristic: descriptor.characteristic,
                                         descriptor: descriptor.uuid)
        let deadline = ContinuousClock.now + timeout
        let what = "descriptor \(descriptor.uuid.shortString) of characteristic \(descriptor.characteristic.shortString) in service "
            + descriptor.service.shortString
        return try await following(descriptor, what: what, deadline: deadline, operation: operation, mayRepeat: true,
                                   find: finder(for: descriptor)) { current in
            try await readValue(at: current.path, interface: BlueZ.gattDescriptorInterface, offset: offset,
                                operation: operation, timeout: deadline - .now) { _ in }
        }
    }

    /// Writes a characteristic's value (GattCharacteristic1.WriteValue with option `type`).
    /// For a Write Command BlueZ answers once the packet is queued, not when the device has it.
    /// When the characteristic's object leaves while the write is pending (the device changed
    /// its GATT database: BlueZ never answers it), the write is not sent again and fails with
    /// ``BLEError/outcomeUnknown(_:_:)``; a write answered UnknownObject (its object already
    /// gone, nothing sent) goes to the characteristic's new object, found by its UUIDs.
    /// - Parameters:
    ///   - value: the bytes (BlueZ uses a long write when they exceed the MTU less 3).
    ///   - type: ``WriteType/request`` (default) or ``WriteType/command``.
    ///   - timeout: the limit for the whole write, the wait for our turn included.
    /// - Throws: ``BLEError/notSupported(_:_:)`` when the characteristic's flags do not allow
    ///   `type` (``WriteType/requiredFlag``; nothing is sent: bluetoothd passes a write with an
    ///   explicit type on whatever the flags say) or the device answered ATT Write Not
    ///   Permitted; ``BLEError/notPermitted(_:dbusError:message:)`` (pairing or encryption
    ///   wanted), ``BLEError/timedOut(_:)`` (write), ``BLEError/disconnected(_:)``,
    ///   ``BLEError/failed(_:dbusError:message:)``, ``BLEError/outcomeUnknown(_:_:)``, `CancellationError`.
    public func write(_ characteristic: GATTCharacteristic, _ value: [UInt8], type: WriteType = .request, timeout: Duration) async throws {
        try require(characteristic, oneOf: [type.requiredFlag], for: .write,
                    type == .request ? "be written with response" : "be written without response")
        let operation = device.operation(.write, service: characteristic.service, characteristic: characteristic.uuid)
        let deadline = ContinuousClock.now + timeout
        let session = session
        let what = "characteristic \(characteristic.uuid.shortString) in service \(characteristic.service.shortString)"
        // A write pending when its object leaves is not sent again (see ConnectedDevice+ServiceChanged.swift).
        try await following(characteristic, what: what, deadline: deadline, operation: operation, mayRepeat: false,
                            find: finder(for: characteristic)) { current in
            let call = BlueZ.call(current.path, BlueZ.gattCharacteristicInterface, "WriteValue",
                                  [.bytes(value), .stringVariantDictionary(["type": .string(type.rawValue)])])
            _ = try await session.gate.run(current.path, operation: operation, timeout: deadline - .now) {
                try await retryingInProgress(operation: operation, timeout: deadline - .now) { remaining in
                    try await session.call(call, operation: operation, timeout: remaining,
                                           abortIf: linkLostOrRemoved(current.path, BlueZ.gattCharacteristicInterface, during: operation))
                }
            }
        }
    }

    /// Throws ``BLEError/notSupported(_:_:)`` (operation `kind`, naming the characteristic and
    /// its service) unless `characteristic` has one of `flags`; `ability` completes "cannot …"
    /// in the message, which lists the flags it has.
    func require(_ characteristic: GATTCharacteristic, oneOf flags: [String], for kind: BLEOperation.Kind, _ ability: String) throws {
        guard !flags.contains(where: characteristic.flags.contains) else { return }
        let has = characteristic.flags.isEmpty ? "none" : characteristic.flags.joined(separator: " ")
        throw BLEError.notSupported(
            device.operation(kind, service: characteristic.service, characteristic: characteristic.uuid),
            "characteristic \(characteristic.uuid.named) in service \(characteristic.service.named) on "
                + "\(device.address) cannot \(ability) (flags: \(has))")
    }

    /// ReadValue on `path`: in the attribute's turn, InProgress retried, `onValue` run on the
    /// reply before any later signal is folded.
    private func readValue(at path: ObjectPath, interface: String, offset: UInt16, operation: BLEOperation, timeout: Duration,
                           onValue: @escaping @Sendable ([UInt8]) -> Void) async throws -> [UInt8] {
        // BlueZ takes `offset` only as a uint16 (gatt-client.c parse_options: InvalidArguments otherwise).
        let options: [String: DBusValue] = offset == 0 ? [:] : ["offset": .uint16(offset)]
        let call = BlueZ.call(path, interface, "ReadValue", [.stringVariantDictionary(options)])
        let deadline = ContinuousClock.now + timeout
        let session = session
        let reply = try await session.gate.run(path, operation: operation, timeout: timeout) {
            try await retryingInProgress(operation: operation, timeout: deadline - .now) { remaining in
                try await session.call(call, operation: operation, timeout: remaining,
                                       abortIf: linkLostOrRemoved(path, interface, during: operation)) { reply in
                    if let value = reply.body.first?.bytes { onValue(value) }
                }
            }
        }
        guard let value = reply.body.first?.bytes else { throw BLEError.protocolError(operation, "ReadValue did not return bytes") }
        return value
    }
}
