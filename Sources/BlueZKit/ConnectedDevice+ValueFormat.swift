extension ConnectedDevice {
    /// The format that decodes the values of `characteristic`: the GATT Specification
    /// Supplement's for a SIG characteristic the table has (``CharacteristicFormat/format(for:)``,
    /// nothing read), else the one its Characteristic Presentation Format descriptor (0x2904)
    /// gives (``CharacteristicFormat/init(presentationFormat:name:)``, read once through
    /// GattDescriptor1.ReadValue), named by the characteristic's UUID.
    ///
    /// - Parameter timeout: the limit for the descriptor's read.
    /// - Returns: `nil` when neither gives one, or the descriptor could not be read (the value
    ///   is then printed undecoded rather than the command failing).
    /// - Throws: `CancellationError` only.
    public func valueFormat(of characteristic: GATTCharacteristic, timeout: Duration) async throws -> CharacteristicFormat? {
        if let format = CharacteristicFormat.format(for: characteristic.uuid) { return format }
        guard let descriptor = characteristic.descriptor(CharacteristicFormat.presentationFormatDescriptor) else { return nil }
        let value: [UInt8]
        do {
            value = try await read(descriptor, timeout: timeout)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return nil
        }
        return CharacteristicFormat(presentationFormat: value, name: characteristic.uuid.shortString)
    }
}
