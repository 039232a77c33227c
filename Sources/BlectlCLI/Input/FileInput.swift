import BlueZKit
import DBusKit
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where `write --file` takes its bytes: a file, or standard input (`-`).
enum InputSource: Sendable, Equatable, CustomStringConvertible {
    case standardInput
    case path(String)

    var description: String {
        switch self {
        case .standardInput: "-"
        case .path(let path): path
        }
    }
}

extension ValueParser where Value == InputSource {
    /// A path, or `-` for standard input. Whether it can be read is checked when the command
    /// runs (``FileInput/open(_:)``).
    static var inputSource: ValueParser<InputSource> {
        ValueParser(noun: "value", parse: { (text: String) throws(ExpectedValue) -> InputSource in
            guard !text.isEmpty else { throw ExpectedValue("a file path, or - for standard input") }
            return text == "-" ? .standardInput : .path(text)
        }, describe: { $0.description }, completion: .files)
    }
}

/// The input of `write --file`, read in chunks without blocking a Swift concurrency thread:
/// each read runs on a serial Dispatch queue of its own, where it waits with poll(2) for the
/// input or a wake-up pipe, so that a task cancelled while standard input has nothing to
/// give (a terminal, a slow producer) resumes at once. Standard input is read as it is
/// (its flags are not changed); a file is opened close-on-exec and closed by ``close()``.
final class FileInput: Sendable {
    let source: InputSource
    private let fd: Int32
    private let wake: (read: Int32, write: Int32)
    private let queue = DispatchQueue(label: "blectl.input")
    private let closed = Lock(false)

    private init(source: InputSource, fd: Int32, wake: (Int32, Int32)) {
        self.source = source
        self.fd = fd
        self.wake = wake
    }

    /// Opens the input: standard input as it is, a path for reading.
    /// - Throws: ``InputError`` (exit 64) when the path cannot be opened or is a directory.
    static func open(_ source: InputSource) throws -> FileInput {
        let fd: Int32
        switch source {
        case .standardInput:
            fd = 0
        case .path(let path):
            // O_NONBLOCK: opening a FIFO does not wait for its writer (that wait would be in
            // open(2), where neither --timeout nor a signal reaches it); reads wait in poll(2).
            fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { throw InputError(source: source, reason: String(cString: strerror(errno)), status: .usage) }
            var info = stat()
            if fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
                _ = Glibc.close(fd)
                throw InputError(source: source, reason: "it is a directory", status: .usage)
            }
        }
        var pair: [Int32] = [-1, -1]
        guard pipe(&pair) == 0 else {
            if case .path = source { _ = Glibc.close(fd) }
            throw InputError(source: source, reason: String(cString: strerror(errno)), status: .internal)
        }
        for end in pair {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        return FileInput(source: source, fd: fd, wake: (pair[0], pair[1]))
    }

    /// Reads up to `count` bytes, waiting for them (not on a concurrency thread).
    /// - Returns: the bytes read; empty at the end of the input.
    /// - Throws: ``InputError`` for a read error, `CancellationError` (at once, even while
    ///   the input has nothing to give).
    func read(upTo count: Int) async throws -> [UInt8] {
        let finished = Lock(false)      // set by the reading job before it resolves the shot
        return try await withOneShot { (shot: OneShot<[UInt8]>) in
            queue.async { [self] in
                let outcome = readWaiting(upTo: count, giveUp: { shot.isResolved })
                finished.withLock { $0 = true }
                if let outcome { shot.resolve(outcome) }
            }
            // Cancelled while the job waits in poll: wake it (it sees the shot resolved).
            shot.onFinish { [wake] in
                if !finished.withLock({ $0 }) {
                    var byte: UInt8 = 1
                    _ = Glibc.write(wake.write, &byte, 1)
                }
            }
        }
    }

    /// Calls `take` with each line as it is read (its number from 1, and its bytes without
    /// the newline; nil for a line longer than `maximumLength`, whose bytes are dropped),
    /// the last one even without a newline; returns at the end of the input.
    /// - Throws: ``InputError`` when the input cannot be read; `CancellationError`.
    func forEachLine(maximumLength: Int, _ take: (Int, ArraySlice<UInt8>?) async throws -> Void) async throws {
        var pending: [UInt8] = []
        var number = 0
        var overlong = false
        func line(_ bytes: ArraySlice<UInt8>) async throws {
            number += 1
            try await take(number, overlong ? nil : bytes)
            overlong = false
        }
        while true {
            let chunk = try await read(upTo: 16384)
            if chunk.isEmpty {
                if overlong || !pending.isEmpty { try await line(pending[...]) }
                return
            }
            pending += chunk
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                try await line(pending[start..<newline])
                start = newline + 1
            }
            pending.removeSubrange(..<start)
            if pending.count > maximumLength {
                pending.removeAll()
                overlong = true
            }
        }
    }

    /// Queue only: poll for the input (or the wake pipe), then read; nil when `giveUp`.
    private func readWaiting(upTo count: Int, giveUp: () -> Bool) -> Result<[UInt8], any Error>? {
        var buffer = [UInt8](repeating: 0, count: max(1, count))
        while true {
            if giveUp() { return nil }
            var entries = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failure(InputError(source: source, reason: String(cString: strerror(errno)), status: .internal))
            }
            if entries[1].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while drain.withUnsafeMutableBytes({ Glibc.read(wake.read, $0.baseAddress, $0.count) }) > 0 {}
                continue
            }
            guard entries[0].revents != 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n >= 0 { return .success(Array(buffer[0..<n])) }
            switch errno {
            case EINTR, EAGAIN: continue
            case let code: return .failure(InputError(source: source, reason: String(cString: strerror(code)), status: .internal))
            }
        }
    }

    /// Closes a file opened by ``open(_:)`` (standard input stays open) and the wake pipe,
    /// on the input's queue, after any read. Later calls do nothing.
    func close() {
        let wasClosed = closed.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        guard !wasClosed else { return }
        let (fd, source, wake) = (fd, source, wake)
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)
        queue.async {
            if case .path = source { _ = Glibc.close(fd) }
            _ = Glibc.close(wake.read)
            _ = Glibc.close(wake.write)
        }
    }
}

/// The input of `write --file` cannot be opened (exit 64, before anything is connected) or
/// read (exit 70).
struct InputError: CommandError {
    var source: InputSource
    var reason: String
    var status: ExitStatus

    var description: String {
        switch source {
        case .standardInput: "cannot read standard input: \(reason)"
        case .path(let path): "cannot \(status == .usage ? "open" : "read") '\(path)': \(reason)"
        }
    }
}
