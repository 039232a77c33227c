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
    /// Whether standard input was closed at start (`--file -` is then a usage error).
    static var inputWasClosed: Bool { closedAtStart[0] }

    /// Which of 0, 1, 2 were closed; computed once, by ``reserve()`` at the start of `main`.
    private static let closedAtStart: [Bool] = (0...2).map { (fd: Int32) -> Bool in
        guard fcntl(fd, F_GETFD) < 0, errno == EBADF else { return false }
        let placeholder = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY))
        // open(2) returns the lowest free descriptor: `fd`, the streams below it being open.
        if placeholder >= 0 && placeholder != fd {
            _ = dup2(placeholder, fd)
            _ = close(placeholder)
        }
        return true
    }

    /// Takes 0, 1 and 2 where they are closed. Call first thing, before any descriptor is opened.
    static func reserve() {
        _ = closedAtStart
    }
}
