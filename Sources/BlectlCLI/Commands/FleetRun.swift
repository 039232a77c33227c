import BlueZKit

/// A ``DeviceCommand`` over several devices: the addresses of the command line, then those of
/// `--from` as their lines are read, each address once; at most `--parallel` in progress,
/// each within its own `--timeout`; one line on stdout per device, its result or its error
/// object, printed whole as soon as it is known. `--overall-timeout` ends the run: every
/// device read and not done gets a `timed_out` line. A signal ends it too: every device in
/// progress is cleaned up (Disconnect, StopDiscovery) and no line is printed for it.
///
/// Ends normally when every device succeeded; else throws ``FleetFailure`` (after the lines),
/// whose status is the one the failures share, or 6 when they differ.
struct FleetRun<Command: DeviceCommand>: Sendable {
    let command: Command
    let context: CommandContext

    /// How long past a device's own deadline its clean-up (StopDiscovery, Disconnect) may
    /// still wait for BlueZ, so that a device that timed out leaves nothing running while
    /// the others go on (past the overall deadline, clean-up only puts its calls on the wire).
    static var cleanupAllowance: Duration { .seconds(1) }

    /// Why the run ended.
    private enum Ending: Sendable {
        /// Every device read is done (or the run was cancelled: a signal).
        case done
        /// The input is read; not an ending.
        case inputRead
        /// `--overall-timeout` passed.
        case overallLimit
        /// Standard output failed or its reader went away.
        case outputFailed
    }

    func run() async throws {
        let input = try command.fleet.from.map { try FileInput.open($0) }
        defer { input?.close() }
        let ledger = FleetLedger()
        let overallDeadline = command.fleet.overallTimeout.map { ContinuousClock.now + $0 }
        let (entries, feed) = AsyncStream.makeStream(of: AddressLines.Entry.self)
        let (aborts, abort) = AsyncStream.makeStream(of: Void.self)
        ledger.onOutputFailure = { abort.yield() }
        let ending = await withTaskGroup(of: Ending.self) { group in
            group.addTask {
                // The reader: each address admitted as it is read (a duplicate dropped), so
                // that the overall limit finds every device read, started or not.
                for address in command.addresses where ledger.admit(address) { feed.yield(.address(address)) }
                if let input {
                    do {
                        try await AddressLines.entries(of: input) { entry in
                            if case .address(let address) = entry, !ledger.admit(address) { return }
                            feed.yield(entry)
                        }
                    } catch is CancellationError {
                    } catch {
                        ledger.inputFailed(error)
                    }
                }
                feed.finish()
                return .inputRead
            }
            group.addTask {
                await runDevices(entries, ledger: ledger, overallDeadline: overallDeadline)
                return .done
            }
            if let overallDeadline {
                group.addTask {
                    do { try await Task.sleep(until: overallDeadline, clock: .continuous) } catch { return .done }
                    return .overallLimit
                }
            }
            group.addTask {
                for await _ in aborts { return .outputFailed }
                return .done
            }
            var ending = Ending.inputRead
            while let next = await group.next() {
                guard next != .inputRead else { continue }
                ending = next
                break
            }
            group.cancelAll()
            abort.finish()
            feed.finish()
            return ending
        }
        if Task.isCancelled { throw CancellationError() }
        if let failure = ledger.outputFailure { throw failure }
        if ending == .overallLimit, let limit = command.fleet.overallTimeout {
            for address in ledger.withoutLine {
                let error = OverallLimitPassed(address: address, limit: limit)
                try await print(errorLine(error, status: .timedOut, address: address))
                ledger.finished(address, failure: FleetFailure.Device(error, status: .timedOut))
            }
        }
        if let failure = ledger.inputFailure { throw failure }
        if let failure = ledger.failure { throw failure }
    }

    /// Starts each device as its entry comes, at most `--parallel` at once; an unusable line
    /// gets its error line at once.
    private func runDevices(_ entries: AsyncStream<AddressLines.Entry>, ledger: FleetLedger,
                            overallDeadline: ContinuousClock.Instant?) async {
        await withTaskGroup(of: Void.self) { devices in
            var running = 0
            for await entry in entries {
                switch entry {
                case .unusable(let line):
                    do {
                        try await print(errorLine(line, status: .usage, address: nil))
                        ledger.unusableLine()
                    } catch {
                        ledger.outputFailed(error)
                    }
                case .address(let address):
                    if running >= command.fleet.parallel, await devices.next() != nil { running -= 1 }
                    if Task.isCancelled { return }
                    running += 1
                    devices.addTask { await runDevice(address, ledger: ledger, overallDeadline: overallDeadline) }
                }
            }
        }
    }

    /// One device, within its own `--timeout`, its line printed as soon as its result or its
    /// failure is known; nothing when the run is cancelled first. Its work is not cut to the
    /// overall deadline (a scan cut short would say "not found"): the run cancels it then,
    /// and its clean-up only puts its calls on the wire.
    private func runDevice(_ address: BluetoothAddress, ledger: FleetLedger, overallDeadline: ContinuousClock.Instant?) async {
        let deadline = ContinuousClock.now + command.timeout
        let cleanupDeadline = overallDeadline.map { min($0, deadline + Self.cleanupAllowance) } ?? deadline + Self.cleanupAllowance
        let deviceContext = context.until(deadline)
        do {
            try await CommandDeadline.$instant.withValue(cleanupDeadline) {
                try await command.run(device: address, deviceContext) { result in
                    try await print(resultLine(result, address: address))
                    ledger.finished(address)
                }
            }
        } catch is OutputClosed {
            ledger.outputFailed(OutputClosed())
        } catch let error as OutputFailed {
            ledger.outputFailed(error)
        } catch {
            // Cancelled: the overall limit prints its line, a signal none.
            if Task.isCancelled { return }
            let refined = await deviceContext.refined(error)
            let status = ExitStatus(for: refined)
            if ledger.hasLine(address) {
                ledger.finished(address, failure: FleetFailure.Device(refined, status: status))
                return
            }
            do {
                try await print(errorLine(refined, status: status, address: address))
                ledger.finished(address, failure: FleetFailure.Device(refined, status: status))
            } catch {
                ledger.outputFailed(error)
            }
        }
    }

    // MARK: - Lines

    private func print(_ line: String) async throws {
        try await context.printer.results([line])
    }

    /// The device's usual result: its JSON object, or its text on one line.
    private func resultLine(_ result: DeviceResult, address: BluetoothAddress) -> String {
        switch context.printer.format {
        case .json: result.json.serialized()
        case .text: Self.oneLine(result.text, address: address)
        }
    }

    /// `{"address": …, "error": {…}}`, the error object as the one-device form prints it; in
    /// text, `ADDRESS  error: MESSAGE`.
    private func errorLine(_ error: any Error, status: ExitStatus, address: BluetoothAddress?) -> String {
        switch context.printer.format {
        case .json:
            JSONValue.object([
                ("address", .optional(address?.description)),
                ("error", Printer.errorObject(error, status: status, address: address?.description)),
            ]).serialized()
        case .text:
            "\(address?.description ?? "-")  error: \(Records.printable(String(describing: error)))"
        }
    }

    /// A device's text result on one line: as it is when it is one line (`get-battery`'s),
    /// else its `key: value` lines as `key=value`, after the address.
    static func oneLine(_ lines: [String], address: BluetoothAddress) -> String {
        guard lines.count > 1 else { return lines.first ?? address.description }
        var parts = [address.description]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                parts.append(line)
                continue
            }
            let key = line[..<colon]
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            if key != "address" { parts.append("\(key)=\(value)") }
        }
        return parts.joined(separator: "  ")
    }
}

/// A device still pending when `--overall-timeout` ended the run (124).
struct OverallLimitPassed: CommandError {
    var address: BluetoothAddress
    var limit: Duration

    var status: ExitStatus { .timedOut }

    var description: String {
        "timed out: \(address) was not done when --overall-timeout \(ValueParser.seconds.describe(limit)) s ended the run"
    }
}
