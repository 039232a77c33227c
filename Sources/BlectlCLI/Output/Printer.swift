import BlueZKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes results to stdout (flushed per call, so JSON Lines reach a pipe at once) and
/// diagnostics to stderr.
struct Printer: Sendable {
    var format: OutputFormat

    init(format: OutputFormat) { self.format = format }

    /// Queues each line, followed by a newline, for stdout (``StdoutWriter``: written in
    /// order on a thread of its own; waits only while a stalled reader leaves too much queued).
    /// - Throws: ``OutputClosed`` when stdout is a pipe whose reader has gone (`blectl scan | head -1`),
    ///   `CancellationError` when cancelled while waiting for the reader.
    func results(_ lines: [String]) async throws {
        guard !lines.isEmpty else { return }
        var text = lines.joined(separator: "\n")
        text += "\n"
        try await StdoutWriter.shared.enqueue(text)
    }

    /// As ``results(_:)``, for lines already in UTF-8, each ending in a newline (a stream's
    /// batch: no String is built on the way to stdout).
    /// - Throws: as ``results(_:)``.
    func results(utf8 lines: [UInt8]) async throws {
        guard !lines.isEmpty else { return }
        try await StdoutWriter.shared.enqueue(utf8: lines)
    }

    /// How long ``result(_:)`` waits for its lines to be written: a stalled reader never
    /// holds the clean-up that follows longer than this.
    static let resultWriteLimit: Duration = .milliseconds(200)

    /// Prints a one-shot command's result: queues the lines and waits (at most
    /// ``resultWriteLimit``) until they are written, so that the result is on stdout before
    /// the clean-up that follows (the Disconnect, which BlueZ answers after its 2 s timer).
    /// - Throws: as ``results(_:)``.
    func result(_ lines: [String]) async throws {
        try await results(lines)
        await StdoutWriter.shared.drain(within: Self.resultWriteLimit)
    }

    /// A standard stream, written with write(2): unbuffered, so nothing waits in a buffer
    /// when the process ends by a signal.
    enum Stream: Int32, Sendable {
        case stdout = 1
        case stderr = 2
    }

    /// Writes all of `text` (retrying short writes and EINTR, waiting for POLLOUT on EAGAIN),
    /// the progress line erased first when it is on that terminal (``StatusLine``).
    /// - Returns: false when the stream is closed (EPIPE: libdbus ignores SIGPIPE) or failing.
    @discardableResult
    static func write(_ text: String, to stream: Stream) -> Bool {
        StatusLine.shared.withLineErased(toStdout: stream == .stdout) { writeAll(Array(text.utf8), to: stream.rawValue) == nil }
    }

    /// Writes all of `bytes` to `fd` in pieces of at most `pieceSize` bytes, each ending at a
    /// newline where it can (so that a pipe, which takes a write of up to PIPE_BUF whole or not
    /// at all, holds only whole lines). Retries short writes and EINTR; on EAGAIN (a file
    /// description left O_NONBLOCK) waits in poll(2) for POLLOUT, blocking the calling thread.
    /// - Returns: nil when all was written, else the errno of the write that failed (EPIPE:
    ///   the reader has gone; ENOSPC, EIO, ...: the output failed).
    static func writeAll(_ bytes: [UInt8], to fd: Int32, piecesOf pieceSize: Int = Int.max) -> Int32? {
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                var end = buffer.count - offset > pieceSize ? offset + pieceSize : buffer.count
                if end < buffer.count, let lastNewline = buffer[offset..<end].lastIndex(of: 0x0A) {
                    end = lastNewline + 1
                }
                var written = offset
                while written < end {
                    let n = Glibc.write(fd, buffer.baseAddress! + written, end - written)
                    if n >= 0 {
                        written += n
                        continue
                    }
                    let error = errno
                    switch error {
                    case EINTR:
                        continue
                    case EAGAIN, EWOULDBLOCK:
                        // Full, and non-blocking: wait until it takes more. A reader that goes
                        // away meanwhile wakes poll too (POLLERR), and the write then says EPIPE.
                        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                        while poll(&descriptor, 1, -1) < 0 && errno == EINTR {}
                    default:
                        return error
                    }
                }
                offset = end
            }
            return nil
        }
    }

    /// Reports an error on stderr: a JSON object in json format, a plain line in text format.
    func error(_ error: any Error, status: ExitStatus, address: String? = nil) {
        switch format {
        case .text:
            // One line, whatever the message carries (a bus address from the environment,
            // a name from the radio): control characters shown as `?`.
            Self.write("blectl: error: \(Records.printable(String(describing: error)))\(Self.retryHint(for: error))\n", to: .stderr)
        case .json:
            let object: JSONValue = .object([("error", Self.errorObject(error, status: status, address: address))])
            Self.write(object.serialized() + "\n", to: .stderr)
        }
    }

    /// The error object, `{"code": …, "exit_status": …, "message": …, …}`: on stderr under
    /// `"error"` for one device, in the device's line on stdout for several. A link loss
    /// that bluetoothd explained (Device1.Disconnected, 5.83 and later) adds
    /// `disconnect_reason` (its D-Bus name, `org.bluez.Reason.Timeout`) and
    /// `disconnect_message` (its text) at the end.
    static func errorObject(_ error: any Error, status: ExitStatus, address: String?) -> JSONValue {
        let operation = (error as? BLEError)?.operationInfo ?? (error as? any CommandError)?.operation?.info
        var explained: [(String, JSONValue)] = []
        if case .disconnected(_, let reason?)? = error as? BLEError {
            explained = [("disconnect_reason", .string(reason.name)), ("disconnect_message", .string(reason.message))]
        }
        return .object([
            ("code", .string(ExitStatus.code(for: error))),
            ("exit_status", .int(Int(status.rawValue))),
            ("retryable", .bool(RetryPolicy.isRetryable(error))),
            ("message", .string(String(describing: error))),
            ("operation", .optional(operation?.kind)),
            ("address", .optional(operation?.address ?? address)),
            ("service", .optional(operation?.service)),
            ("characteristic", .optional(operation?.characteristic)),
            ("dbus_error", .optional((error as? BLEError)?.dbusError)),
        ] + explained)
    }
}

extension Printer {
    /// What the text form adds to a retryable error's line: that trying again may help. Not
    /// for a device not found, which was looked for until the timeout (a longer `--timeout`
    /// is the likelier help).
    static func retryHint(for error: any Error) -> String {
        guard RetryPolicy.isRetryable(error), (error as? BLEError)?.transience != .deviceMissing else { return "" }
        return " (transient: trying again may succeed)"
    }
}

/// stdout's reader has gone: the command stops, cleans up, and blectl ends by SIGPIPE as
/// Unix filters do.
struct OutputClosed: Error, Sendable {}

/// A write to stdout failed for a reason other than a reader that has gone (EPIPE): a full
/// disk (ENOSPC), an I/O error (EIO), ... The command stops, cleans up, and blectl exits 74
/// (EX_IOERR) naming the errno.
struct OutputFailed: CommandError, Sendable, Equatable {
    /// The errno write(2) failed with.
    var errno: Int32

    var status: ExitStatus { .ioError }

    var description: String {
        "cannot write to standard output: \(String(cString: strerror(errno))) (\(Self.name(of: errno)))"
    }

    /// The symbolic name of the errno values a write can fail with (`ENOSPC`), else `errno N`.
    static func name(of errno: Int32) -> String {
        let names: [Int32: String] = [
            EIO: "EIO", ENOSPC: "ENOSPC", EDQUOT: "EDQUOT", EFBIG: "EFBIG", EBADF: "EBADF", EINVAL: "EINVAL",
            EPERM: "EPERM", EACCES: "EACCES", ENXIO: "ENXIO", EROFS: "EROFS", ENODEV: "ENODEV", ECONNRESET: "ECONNRESET",
            ENOTCONN: "ENOTCONN", ENOBUFS: "ENOBUFS", ENOMEM: "ENOMEM", EDESTADDRREQ: "EDESTADDRREQ", EPIPE: "EPIPE",
        ]
        return names[errno] ?? "errno \(errno)"
    }
}
