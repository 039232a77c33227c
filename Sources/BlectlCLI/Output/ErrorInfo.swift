import BlueZKit

/// The fields of a BlueZ-layer error that the JSON error object reports.
extension BLEError {
    var operationInfo: (kind: String, address: String?, service: String?, characteristic: String?)? {
        if case .deviceNotFound(let address) = self { return ("device_lookup", address.description, nil, nil) }
        guard let op = operation else { return nil }
        return (op.kind.rawValue, op.address?.description, op.service?.shortString, op.characteristic?.shortString)
    }
}
