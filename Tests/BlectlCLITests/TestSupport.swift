import Testing
@testable import BlectlCLI
import BlueZKit

/// Parses `arguments` and returns the invocation, recording an issue on a usage error.
func invocation(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> Invocation? {
    switch parseCommandLine(arguments) {
    case .success(let invocation):
        return invocation
    case .failure(let error):
        Issue.record("unexpected usage error for \(arguments): \(error.message)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Parses `arguments` and returns the usage error, recording an issue on success.
func usageError(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> UsageError? {
    switch parseCommandLine(arguments) {
    case .success(let invocation):
        Issue.record("expected a usage error for \(arguments), got \(invocation)", sourceLocation: sourceLocation)
        return nil
    case .failure(let error):
        return error
    }
}

/// The help text `arguments` produce, recording an issue for anything else.
func helpText(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    guard case .help(let text)? = invocation(arguments, sourceLocation: sourceLocation) else {
        Issue.record("expected help for \(arguments)", sourceLocation: sourceLocation)
        return nil
    }
    return text
}

func address(_ string: String) -> BluetoothAddress {
    BluetoothAddress(string)!
}

func uuid(_ string: String) -> BluetoothUUID {
    BluetoothUUID(string)!
}

let sampleAddress = "C0:FF:EE:00:00:01"
