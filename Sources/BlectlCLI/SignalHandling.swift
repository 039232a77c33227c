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
/// signal, unless it is the first one again within ``repeatWindow`` of blectl taking the
/// first (GNU timeout(1) sends its signal to blectl and then to its process group,
/// microseconds apart: taken as a second Ctrl-C, it skipped the clean-up and left a link up).
/// SIGHUP is a closed terminal or a `kill -HUP`; without this, it would end blectl with its
/// connection and discovery still up. A SIGHUP ignored when blectl starts (`nohup`) stays
/// ignored.
///
/// One per process (the signals noted before Dispatch takes them are process-wide).
/// `@unchecked`: `sources` is touched only by `install`, and `registered` and
/// `firstHandledAt` only on `queue`.
final class SignalHandling: @unchecked Sendable {
    private let received = Atomic<Int32>(0)
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "blectl.signals")
    /// Sources registered so far (on `queue`).
    private var registered = 0
    /// When the first signal was handled (on `queue`).
    private var firstHandledAt: ContinuousClock.Instant?

    /// How soon after the first a signal of the same number is the same event.
    let repeatWindow: Duration

    /// ``repeatWindow`` unless ``repeatWindowVariable`` says otherwise: far shorter than a
    /// person's second Ctrl-C, far longer than the microseconds between timeout(1)'s two.
    static let defaultRepeatWindow: Duration = .milliseconds(200)

    /// The environment variable that sets ``repeatWindow``, in seconds as `--timeout` takes
    /// them (0: every second signal ends the process at once). Tests that send the same
    /// signal twice set it, so that their own delay between the two, which a loaded machine
    /// can stretch past 200 ms, does not decide the outcome.
    static let repeatWindowVariable = "BLECTL_SIGNAL_REPEAT_WINDOW"

    /// The window `value` (the variable's value, nil when unset) asks for, else
    /// ``defaultRepeatWindow``: a value `--timeout` would refuse is ignored, as
    /// `BLECTL_COMPLETION_TIMEOUT`'s is.
    static func repeatWindow(_ value: String?) -> Duration {
        guard let value, let window = try? ValueParser.seconds.parse(value) else { return defaultRepeatWindow }
        return window
    }

    /// The window from ``repeatWindowVariable`` unless given.
    init(repeatWindow: Duration = SignalHandling.repeatWindow(getenv(SignalHandling.repeatWindowVariable).map { String(cString: $0) })) {
        self.repeatWindow = repeatWindow
    }

    /// Whether `sig`, handled `elapsed` after the first signal `first`, repeats it (and is
    /// dropped) rather than being a second signal (which ends the process at once).
    static func isRepeat(_ sig: Int32, of first: Int32, after elapsed: Duration, window: Duration) -> Bool {
        sig == first && elapsed < window
    }

    /// The first signal received, or nil.
    var firstSignal: Int32? {
        let value = received.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// The signals handled, in man/blectl.1's SIGNALS order.
    static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM]

    /// Starts listening; `onFirst` runs once, on a Dispatch queue, for the first signal.
    ///
    /// No signal is lost however early it comes, and early ones count in the order they came.
    /// libdispatch (Linux) takes a signal through a signalfd and a handler of its own, both
    /// set up on its manager thread some time after `activate()`; a signal set to be ignored
    /// until then would be dropped (a SIGINT in the first milliseconds of a
    /// `scan --timeout inf` was, one run in sixty under load: it scanned on). So the signals
    /// are never ignored: until every source is registered, ``noteEarly`` appends each signal
    /// to ``early`` (as do the sources' own event handlers meanwhile); the last registration
    /// closes that log and handles what it holds, in order. A signal whose handling began
    /// before libdispatch's handler replaced ours but that reaches the log only after it
    /// closed is sent again (`kill`), now to libdispatch's handler.
    func install(onFirst: @escaping @Sendable () -> Void) {
        // A second instance would put noteEarly back in front of libdispatch's handler with
        // the log closed: every signal would be sent again, to itself.
        precondition(!Self.installed.exchange(true, ordering: .relaxed), "SignalHandling.install: one per process")
        _ = Self.early.load(ordering: .relaxed)   // initialised before a handler can touch it
        let wanted = Self.handled.filter { !($0 == SIGHUP && Self.isIgnored($0)) }
        // On `queue` only (the sources' handlers and the last registration's).
        let handle: @Sendable (Int32) -> Void = { [self] sig in
            let now = ContinuousClock.now
            let (exchanged, first) = received.compareExchange(expected: 0, desired: sig, ordering: .acquiringAndReleasing)
            if exchanged {
                firstHandledAt = now
                onFirst()
            } else if let firstHandledAt, Self.isRepeat(sig, of: first, after: now - firstHandledAt, window: repeatWindow) {
                return
            } else {
                Self.die(by: sig)
            }
        }
        for sig in wanted {
            // Only in place of the default or SIG_IGN: a handler already there (libdispatch's,
            // had a source for this signal been made before) is left alone, since libdispatch
            // would not install it again and noteEarly would then send itself the signal.
            if !Self.hasHandler(sig) {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = Self.noteEarly
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(sig, &action, nil)
            }
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler {
                // Before the log closes, in line behind the early ones.
                if !Self.EarlyLog.append(sig, to: Self.early) { handle(sig) }
            }
            source.setRegistrationHandler { [self] in
                registered += 1
                guard registered == wanted.count else { return }
                let log = Self.early.exchange(Self.EarlyLog.closed, ordering: .sequentiallyConsistent)
                for early in Self.EarlyLog.signals(in: log) { handle(early) }
            }
            source.activate()
            sources.append(source)
        }
    }

    /// Whether `sig` is ignored (SIG_IGN) as blectl found it.
    private static func isIgnored(_ sig: Int32) -> Bool {
        disposition(sig) == 1   // SIG_IGN, (__sighandler_t) 1
    }

    /// Whether a handler function is installed for `sig` (neither SIG_DFL nor SIG_IGN).
    private static func hasHandler(_ sig: Int32) -> Bool {
        disposition(sig) > 1
    }

    /// `sig`'s handler as an address: 0 for SIG_DFL, 1 for SIG_IGN (glibc's values).
    private static func disposition(_ sig: Int32) -> Int {
        var current = sigaction()
        guard sigaction(sig, nil, &current) == 0, let handler = current.__sigaction_handler.sa_handler else { return 0 }
        return unsafeBitCast(handler, to: Int.self)
    }

    /// Set by the first ``install(onFirst:)``.
    private static let installed = Atomic<Bool>(false)

    /// The signals that came before every source was registered (``EarlyLog``).
    private static let early = Atomic<UInt64>(0)

    /// The handler until libdispatch installs its own: appends the signal to ``early``, or,
    /// once that is closed, sends it again to libdispatch's handler. Async-signal-safe: one
    /// compare-and-exchange loop on storage initialised before, and `kill`.
    private static let noteEarly: @convention(c) (Int32) -> Void = { sig in
        if !EarlyLog.append(sig, to: early) { kill(getpid(), sig) }
    }

    /// Up to 11 signal numbers (under 32) in arrival order in one word, so that a signal
    /// handler can append with a compare-and-exchange: bits 0-54 the numbers, 5 bits each;
    /// bits 56-59 how many; bit 63 set once closed.
    enum EarlyLog {
        static let closed: UInt64 = 1 << 63
        static let capacity: UInt64 = 11

        /// Appends `sig`; false when the log is closed. A signal past the capacity is dropped
        /// (returns true): by then the first two have decided everything.
        static func append(_ sig: Int32, to log: borrowing Atomic<UInt64>) -> Bool {
            var old = log.load(ordering: .sequentiallyConsistent)
            while true {
                if old & closed != 0 { return false }
                let count = (old >> 56) & 0xF
                if count >= capacity { return true }
                let new = (old & ~(UInt64(0xF) << 56)) | (UInt64(sig & 0x1F) << (5 * count)) | ((count + 1) << 56)
                let (exchanged, original) = log.compareExchange(expected: old, desired: new, ordering: .sequentiallyConsistent)
                if exchanged { return true }
                old = original
            }
        }

        /// The signals `word` holds, in arrival order.
        static func signals(in word: UInt64) -> [Int32] {
            let count = min((word >> 56) & 0xF, capacity)
            return (0..<count).map { Int32((word >> (5 * $0)) & 0x1F) }
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
