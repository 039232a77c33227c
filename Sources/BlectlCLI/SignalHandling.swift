import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The signals that end a process by default (SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2,
/// SIGALRM) as events: the first cancels the work (clean-up then runs, and the process then
/// ends by that signal: 128 + its number), a second one ends the process at once by that
/// signal. SIGHUP is a closed terminal or a `kill -HUP`; without this, it would end blectl
/// with its connection and discovery still up.
/// `@unchecked`: `sources` is written only by `install`, before any signal can arrive.
final class SignalHandling: @unchecked Sendable {
    private let received = Atomic<Int32>(0)
    private var sources: [any DispatchSourceSignal] = []

    /// The first signal received, or nil.
    var firstSignal: Int32? {
        let value = received.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// The signals handled, in man/blectl.1's SIGNALS order.
    static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM]

    /// Starts listening; `onFirst` runs once, on a Dispatch queue, for the first signal.
    func install(onFirst: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "blectl.signals")
        for sig in Self.handled {
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
