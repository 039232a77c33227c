import BlueZKit
import DBusKit

/// Some devices of a run failed, or lines of `--from` had no address: the status they share
/// (64 for such a line), or ``ExitStatus/devicesFailedDifferently`` when they differ. Each
/// device's line says why.
struct FleetFailure: CommandError {
    /// One device that failed: its status, the `code` of its error object, and whether its
    /// failure is retryable.
    struct Device: Sendable {
        var status: ExitStatus
        var code: String
        var retryable: Bool

        init(_ error: any Error, status: ExitStatus) {
            self.status = status
            code = ExitStatus.code(for: error)
            retryable = RetryPolicy.isRetryable(error)
        }
    }

    /// Each device that failed.
    var failed: [Device]
    /// The devices of the run (each address once).
    var devices: Int
    /// The lines of `--from` that had no address.
    var unusableLines: Int

    var status: ExitStatus {
        let all = failed.map(\.status) + (unusableLines > 0 ? [.usage] : [])
        guard let first = all.first, all.allSatisfy({ $0 == first }) else { return .devicesFailedDifferently }
        return first
    }

    /// Whether running the same devices again may succeed: every device's failure is
    /// retryable, and no line of `--from` lacked an address.
    var isRetryable: Bool { unusableLines == 0 && failed.allSatisfy(\.retryable) }

    var description: String {
        var counts: [(code: String, count: Int)] = []
        for device in failed {
            if let index = counts.firstIndex(where: { $0.code == device.code }) { counts[index].count += 1 } else { counts.append((device.code, 1)) }
        }
        var parts: [String] = []
        if !failed.isEmpty {
            let of = devices == 1 ? "1 device" : "\(devices) devices"
            parts.append("\(failed.count) of \(of) failed (\(counts.map { "\($0.count) \($0.code)" }.joined(separator: ", ")))")
        }
        if unusableLines > 0 {
            parts.append(unusableLines == 1 ? "1 line of --from had no address" : "\(unusableLines) lines of --from had no address")
        }
        return parts.joined(separator: "; ")
    }
}

/// What a run has seen: the devices read (each once), which have their line, the statuses of
/// those that failed, and what ended it early.
final class FleetLedger: Sendable {
    private struct State {
        var order: [BluetoothAddress] = []
        var admitted: Set<BluetoothAddress> = []
        var lined: Set<BluetoothAddress> = []
        var failures: [FleetFailure.Device] = []
        var unusableLines = 0
        var outputFailure: (any Error)?
        var inputFailure: (any Error)?
        var onOutputFailure: (@Sendable () -> Void)?
    }

    private let state = Lock(State())

    /// Called once, for the first output failure.
    var onOutputFailure: (@Sendable () -> Void)? {
        get { state.withLock { $0.onOutputFailure } }
        set { state.withLock { $0.onOutputFailure = newValue } }
    }

    /// Takes `address` into the run; false when it already is (a duplicate, probed once).
    func admit(_ address: BluetoothAddress) -> Bool {
        state.withLock { state in
            guard state.admitted.insert(address).inserted else { return false }
            state.order.append(address)
            return true
        }
    }

    /// `address` has its line (or, after its result line, a later failure): `failure` nil
    /// when it succeeded.
    func finished(_ address: BluetoothAddress, failure: FleetFailure.Device? = nil) {
        state.withLock { state in
            state.lined.insert(address)
            if let failure { state.failures.append(failure) }
        }
    }

    func hasLine(_ address: BluetoothAddress) -> Bool {
        state.withLock { $0.lined.contains(address) }
    }

    /// A line of `--from` without an address has had its error line.
    func unusableLine() {
        state.withLock { state in
            state.unusableLines += 1
        }
    }

    /// The devices read that have no line yet, in the order they were read.
    var withoutLine: [BluetoothAddress] {
        state.withLock { state in state.order.filter { !state.lined.contains($0) } }
    }

    func outputFailed(_ error: any Error) {
        let notify = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.outputFailure == nil else { return nil }
            state.outputFailure = error
            return state.onOutputFailure
        }
        notify?()
    }

    var outputFailure: (any Error)? { state.withLock { $0.outputFailure } }

    func inputFailed(_ error: any Error) {
        state.withLock { state in
            if state.inputFailure == nil { state.inputFailure = error }
        }
    }

    var inputFailure: (any Error)? { state.withLock { $0.inputFailure } }

    /// The run's failure, nil when every device succeeded.
    var failure: FleetFailure? {
        state.withLock { state in
            state.failures.isEmpty && state.unusableLines == 0 ? nil : FleetFailure(failed: state.failures, devices: state.order.count, unusableLines: state.unusableLines)
        }
    }
}
