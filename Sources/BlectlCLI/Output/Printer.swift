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

    /// Writes each line followed by a newline, in one write, then flushes.
    public func results(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        var text = lines.joined(separator: "\n")
        text += "\n"
        Self.write(text, to: .stdout)
    }

    /// A standard stream, written with write(2): unbuffered, so nothing waits in a buffer
    /// when the process ends by a signal.
    public enum Stream: Int32, Sendable {
        case stdout = 1
        case stderr = 2
    }

    /// Writes all of `text` (retrying short writes and EINTR); a closed pipe ends quietly.
    public static func write(_ text: String, to stream: Stream) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(stream.rawValue, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }

    /// Reports an error on stderr: a JSON object in json format, a plain line in text format.
    public func error(_ error: any Error, status: ExitStatus, address: String? = nil) {
        let message = String(describing: error)
        switch format {
        case .text:
            Self.write("blectl: error: \(message)\n", to: .stderr)
        case .json:
            let operation = (error as? BlueZKitErrorInfo)?.operationInfo
            let object: JSONValue = .object([("error", .object([
                ("code", .string(status.code)),
                ("exit_status", .int(Int(status.rawValue))),
                ("message", .string(message)),
                ("operation", .optional(operation?.kind)),
                ("address", .optional(operation?.address ?? address)),
                ("service", .optional(operation?.service)),
                ("characteristic", .optional(operation?.characteristic)),
                ("dbus_error", .optional((error as? BlueZKitErrorInfo)?.dbusErrorName)),
            ]))])
            Self.write(object.serialized() + "\n", to: .stderr)
        }
    }
}
