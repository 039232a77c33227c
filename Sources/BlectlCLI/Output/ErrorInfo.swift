import BlueZKit

/// The fields of a BlueZ-layer error that the JSON error object reports.
extension BLEError {
    var operationInfo: (kind: String, address: String?, service: String?, characteristic: String?)? {
        if case .deviceNotFound(let address) = self { return ("device_lookup", address.description, nil, nil) }
        return operation?.info
    }

    /// The address of ``BLEError/deviceNotFound(_:)``, else nil.
    var deviceNotFoundAddress: BluetoothAddress? {
        if case .deviceNotFound(let address) = self { return address }
        return nil
    }
}

extension BLEOperation {
    var info: (kind: String, address: String?, service: String?, characteristic: String?) {
        (kind.rawValue, address?.description, service?.shortString, characteristic?.shortString)
    }
}
