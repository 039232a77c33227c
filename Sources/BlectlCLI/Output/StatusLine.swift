import BlueZKit
import DBusKit
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The progress line: on a terminal's stderr, one line that says what blectl is doing and
/// for how long (`connecting to C0:FF:EE:00:00:01 (1.2 s)`), redrawn in place every
/// ``interval`` and erased before anything else is written to the terminal (a result on a
/// stdout that is the terminal too, an error, a diagnostic) and at the end.
///
/// Off unless ``start(stdoutIsTerminal:)`` is called (blectl does when stderr is a terminal
/// whose TERM is not `dumb`, without `-q` or `-v`); while off, every call is one atomic load.
/// Drawn as `CR`, the text cut to the terminal's width, `ESC [ K` (erase to the end of the
/// line); erased as `CR ESC [ K`. No colour. The first drawing waits one ``interval``, so a
/// command done sooner shows none.
final class StatusLine: Sendable {
    static let shared = StatusLine()

    /// How often the line is redrawn (its elapsed time moves).
    static let interval: Duration = .milliseconds(100)
    static let erase = "\r\u{1B}[K"

    private struct State {
        var phase: String?
        var detail: String?
        var since = ContinuousClock.now
        /// Whether the line is on the terminal now.
        var drawn = false
        var timer: (any DispatchSourceTimer)?
    }

    private let active = Atomic<Bool>(false)
    /// Whether stdout is the terminal too: its writes then erase the line first.
    private let coversStdout = Atomic<Bool>(false)
    /// What the line says; never held across a write, so ``show(_:detail:)`` (called from the
    /// session's queue and from clean-up) never waits for the terminal.
    private let state = Lock(State())
    /// Held across every write to the terminal (a drawing, an erasure and the write it
    /// precedes), so they do not interleave. A stopped terminal (Ctrl-S, a reader that is not
    /// reading) blocks its holder in write(2), and only writers wait for it.
    private let terminal = Lock(())

    /// Whether the line is shown at all (stderr a terminal, no -q nor -v).
    var isActive: Bool { active.load(ordering: .relaxed) }

    /// Starts the line (once): redrawn every ``interval`` on its own queue until ``finish()``.
    func start(stdoutIsTerminal: Bool) {
        coversStdout.store(stdoutIsTerminal, ordering: .relaxed)
        state.withLock { state in
            guard state.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "blectl.status"))
            let nanoseconds = Int(Self.interval.components.attoseconds / 1_000_000_000) + Int(Self.interval.components.seconds) * 1_000_000_000
            timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
            timer.setEventHandler { [self] in draw() }
            state.timer = timer
            state.since = .now
            active.store(true, ordering: .relaxed)
            timer.activate()
        }
    }

    /// Says what blectl is doing now: `phase` (`connecting to C0:FF:EE:00:00:01`), with
    /// `detail` after a colon (`12 devices`; made only when the line is shown, so a scan or a
    /// notification stream without a terminal builds no text per batch). The elapsed time
    /// restarts when `phase` changes.
    func show(_ phase: String, detail: @autoclosure () -> String? = nil) {
        guard isActive else { return }
        let detail = detail()
        state.withLock { state in
            if state.phase != phase {
                state.phase = phase
                state.since = .now
            }
            state.detail = detail
        }
    }

    /// Runs `write` (a write to stderr, or to stdout when stdout is the terminal too) with the
    /// line erased first; it is drawn again at the next tick.
    func withLineErased<T>(toStdout: Bool = false, _ write: () -> T) -> T {
        guard isActive, !toStdout || coversStdout.load(ordering: .relaxed) else { return write() }
        return terminal.withLock { _ in
            if takeDrawn() {
                Self.writeStderr(Self.erase)
            }
            return write()
        }
    }

    /// Erases the line and stops it for good (before blectl exits), after a drawing under
    /// way. On a terminal that takes no output (stopped, or full), the line is left as it
    /// is: blectl must not wait for the terminal to exit.
    func finish() {
        guard isActive else { return }
        let timer = state.withLock { state in
            active.store(false, ordering: .relaxed)
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
        let erase = { [self] in
            guard Self.stderrTakesOutputNow(), takeDrawn() else { return }
            Self.writeStderr(Self.erase)
        }
        // The terminal busy: a drawing begun before the timer was cancelled, or a write
        // behind the line. On a terminal that takes output, it ends at once, and the line it
        // may have drawn is erased after it; on one that does not, it is left.
        if terminal.withLockIfAvailable({ _ in erase() }) == nil, Self.stderrTakesOutputNow() {
            terminal.withLock { _ in erase() }
        }
    }

    /// Whether the line is on the terminal; it is taken as erased from here on.
    private func takeDrawn() -> Bool {
        state.withLock { state in
            defer { state.drawn = false }
            return state.drawn
        }
    }

    /// Whether a short write to stderr would not block now (POLLOUT, no error).
    private static func stderrTakesOutputNow() -> Bool {
        var descriptor = pollfd(fd: 2, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLOUT) != 0
            && descriptor.revents & Int16(POLLERR | POLLHUP) == 0
    }

    private func draw() {
        terminal.withLock { _ in
            let text: String? = state.withLock { state in
                guard active.load(ordering: .relaxed), let phase = state.phase else { return nil }
                var text = phase
                if let detail = state.detail { text += ": " + detail }
                return text + " (" + Self.tenths(ContinuousClock.now - state.since) + ")"
            }
            guard let text else { return }
            state.withLock { $0.drawn = true }
            Self.writeStderr("\r" + Self.fitted(text, columns: Self.columns()) + "\u{1B}[K")
        }
    }

    /// `text` cut to fit `columns` less one (a line that wraps could not be erased).
    static func fitted(_ text: String, columns: Int) -> String {
        let room = max(1, columns - 1)
        return text.count <= room ? text : String(text.prefix(max(0, room - 1))) + "…"
    }

    /// `3.2 s`.
    static func tenths(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let tenths = max(0, seconds * 10 + attoseconds / 100_000_000_000_000_000)
        return "\(tenths / 10).\(tenths % 10) s"
    }

    /// The terminal's width (TIOCGWINSZ on stderr), 80 when it does not say.
    private static func columns() -> Int {
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    private static func writeStderr(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += n
            }
        }
    }
}

/// Turns the operations the session begins into the progress line's phases.
struct ProgressObserver: SessionObserver {
    func session(began operation: BLEOperation) {
        guard let phase = Self.phase(of: operation) else { return }
        StatusLine.shared.show(phase)
    }

    /// What the line says for `operation`; nil keeps the phase shown (the discovery a device
    /// lookup or a scan runs, the adapter checks).
    static func phase(of operation: BLEOperation) -> String? {
        let device = operation.address.map { " \($0)" } ?? ""
        var characteristic = ""
        if let descriptor = operation.descriptor { characteristic += " descriptor \(descriptor.shortString) of" }
        if let uuid = operation.characteristic { characteristic += " \(uuid.shortString)" }
        switch operation.kind {
        case .bus: return "connecting to bluetoothd"
        case .adapter, .discovery: return nil
        case .deviceLookup: return "looking for" + device
        case .connect: return "connecting to" + device
        case .serviceResolution: return "resolving the services of" + device
        case .serviceLookup: return "looking up service" + (operation.service.map { " \($0.shortString)" } ?? "")
        case .read: return "reading" + characteristic
        case .write: return "writing" + characteristic
        case .notificationSetup: return "subscribing to" + characteristic
        case .response: return "waiting for the response on" + characteristic
        case .notifications: return "receiving notifications of" + characteristic
        case .battery: return "reading the battery level of" + device
        case .disconnect: return "waiting for the disconnect of" + device
        case .agent: return "registering the pairing agent"
        case .pair: return "pairing with" + device
        case .trust: return "setting Trusted on" + device
        case .unpair: return "removing" + device
        case .advertise: return "registering the advertisement"
        case .serve: return "registering the GATT application"
        }
    }
}
