import BlueZKit

/// The fields of an error that the JSON error object reports.
protocol BlueZKitErrorInfo {
    var operationInfo: (kind: String, address: String?, service: String?, characteristic: String?)? { get }
    var dbusErrorName: String? { get }
}

extension BLEError: BlueZKitErrorInfo {
    var operationInfo: (kind: String, address: String?, service: String?, characteristic: String?)? {
        if case .deviceNotFound(let address) = self { return ("device_lookup", address.description, nil, nil) }
        guard let op = operation else { return nil }
        return (op.kind.rawValue, op.address?.description, op.service?.shortString, op.characteristic?.shortString)
    }

    var dbusErrorName: String? { dbusError }
}
