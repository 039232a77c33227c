#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Printer {
    /// How often ``waitUntilStdoutClosed()`` looks at stdout.
    static let closedOutputPollInterval: Duration = .milliseconds(100)

    /// Returns only by throwing: ``OutputClosed`` once stdout is a pipe whose reader has
    /// gone, `CancellationError` when cancelled.
    ///
    /// A failed write finds a closed pipe only when there is something to write; a scan
    /// that has reported every device it hears may write nothing more for its whole
    /// timeout (`blectl scan --timeout 60 | head -1`). Linux reports POLLERR on the write
    /// end of a pipe without readers (and POLLHUP on a socket whose peer shut down), which
    /// is how coreutils' `tail -f` notices the same thing. Files and terminals never
    /// report either, so for them this only sleeps.
    static func waitUntilStdoutClosed() async throws {
        while true {
            try await Task.sleep(for: closedOutputPollInterval)
            var fd = pollfd(fd: Stream.stdout.rawValue, events: 0, revents: 0)
            if poll(&fd, 1, 0) == 1, fd.revents & Int16(POLLERR | POLLHUP) != 0 {
                throw OutputClosed()
            }
        }
    }
}
