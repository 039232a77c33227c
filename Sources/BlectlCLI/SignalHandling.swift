import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// SIGINT and SIGTERM as events: the first cancels the work (clean-up then runs), a second
/// one ends the process at once by that signal.
/// `@unchecked`: `sources` is written only by `install`, before any signal can arrive.
final class SignalHandling: @unchecked Sendable {
    private let received = Atomic<Int32>(0)
    private var sources: [any DispatchSourceSignal] = []

    /// The first signal received, or nil.
    var firstSignal: Int32? {
        let value = received.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// Starts listening; `onFirst` runs once, on a Dispatch queue, for the first signal.
    func install(onFirst: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "blectl.signals")
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [self] in
                let (exchanged, _) = received.compareExchange(expected: 0, desired: sig, ordering: .acquiringAndReleasing)
                if exchanged {
                    onFirst()
                } else {
                    Self.die(by: sig)
                }
            }
            source.activate()
            sources.append(source)
        }
    }

    /// Ends the process by `sig` with its default action, so the parent sees 128+sig.
    static func die(by sig: Int32) -> Never {
        StatusLine.shared.finish()
        signal(sig, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, sig)
        sigprocmask(SIG_UNBLOCK, &set, nil)
        raise(sig)
        _exit(128 + sig)
    }
}
