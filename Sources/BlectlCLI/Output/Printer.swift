import BlueZKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes results to stdout (flushed per call, so JSON Lines reach a pipe at once) and
/// diagnostics to stderr.
public struct Printer: Sendable {
    public var format: OutputFormat

    public init(format: OutputFormat) { self.format = format }

    /// Queues each line, followed by a newline, for stdout (``StdoutWriter``: written in
    /// order on a thread of its own; waits only while a stalled reader leaves too much queued).
    /// - Throws: ``OutputClosed`` when stdout is a pipe whose reader has gone (`blectl scan | head -1`),
    ///   `CancellationError` when cancelled while waiting for the reader.
    public func results(_ lines: [String]) async throws {
        guard !lines.isEmpty else { return }
        var text = lines.joined(separator: "\n")
        text += "\n"
        try await StdoutWriter.shared.enqueue(text)
    }

    /// How long ``result(_:)`` waits for its lines to be written: a stalled reader never
    /// holds the clean-up that follows longer than this.
    static let resultWriteLimit: Duration = .milliseconds(200)

    /// Prints a one-shot command's result: queues the lines and waits (at most
    /// ``resultWriteLimit``) until they are written, so that the result is on stdout before
    /// the clean-up that follows (the Disconnect, which BlueZ answers after its 2 s timer).
    /// - Throws: as ``results(_:)``.
    public func result(_ lines: [String]) async throws {
        try await results(lines)
        await StdoutWriter.shared.drain(within: Self.resultWriteLimit)
    }

    /// A standard stream, written with write(2): unbuffered, so nothing waits in a buffer
    /// when the process ends by a signal.
    public enum Stream: Int32, Sendable {
        case stdout = 1
        case stderr = 2
    }

    /// Writes all of `text` (retrying short writes and EINTR), the progress line erased first
    /// when it is on that terminal (``StatusLine``).
    /// - Returns: false when the stream is closed (EPIPE: libdbus ignores SIGPIPE) or failing.
    @discardableResult
    public static func write(_ text: String, to stream: Stream) -> Bool {
        StatusLine.shared.withLineErased(toStdout: stream == .stdout) { writeAll(text, to: stream) }
    }

    private static func writeAll(_ text: String, to stream: Stream) -> Bool {
        var text = text
        return text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(stream.rawValue, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }

    /// Reports an error on stderr: a JSON object in json format, a plain line in text format.
    public func error(_ error: any Error, status: ExitStatus, address: String? = nil) {
        let message = String(describing: error)
        switch format {
        case .text:
            Self.write("blectl: error: \(message)\n", to: .stderr)
        case .json:
            let operation = (error as? BLEError)?.operationInfo ?? (error as? any CommandError)?.operation?.info
            let object: JSONValue = .object([("error", .object([
                ("code", .string(ExitStatus.code(for: error))),
                ("exit_status", .int(Int(status.rawValue))),
                ("message", .string(message)),
                ("operation", .optional(operation?.kind)),
                ("address", .optional(operation?.address ?? address)),
                ("service", .optional(operation?.service)),
                ("characteristic", .optional(operation?.characteristic)),
                ("dbus_error", .optional((error as? BLEError)?.dbusError)),
            ]))])
            Self.write(object.serialized() + "\n", to: .stderr)
        }
    }
}

/// stdout's reader has gone: the command stops, cleans up, and blectl ends by SIGPIPE as
/// Unix filters do.
public struct OutputClosed: Error, Sendable {}
