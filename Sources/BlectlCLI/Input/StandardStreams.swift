#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Standard input, output and error as blectl found them at start.
///
/// A stream that was closed (`<&-`, `>&-`, `2>&-`) is given `/dev/null`, opened the wrong way
/// round (standard input write-only, standard output and error read-only): the descriptor is
/// taken, so the bus connection or `--file` cannot land on 0, 1 or 2 and be read as input or
/// written with results, and using the stream fails with EBADF as on a closed one (results:
/// exit 74 `io_error`).
enum StandardStreams {
    /// Whether standard input was closed at start (`--file -` is then a usage error). Set by
    /// ``reserve()`` before anything else runs, read only afterwards.
    nonisolated(unsafe) private(set) static var inputWasClosed = false

    /// Takes 0, 1 and 2 where they are closed. Call first thing, before any descriptor is
    /// opened (open(2) returns the lowest free descriptor).
    static func reserve() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) < 0 && errno == EBADF {
            let placeholder = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY)
            if placeholder >= 0 && placeholder != fd {
                _ = dup2(placeholder, fd)
                _ = close(placeholder)
            }
            if fd == 0 { inputWasClosed = true }
        }
    }
}
