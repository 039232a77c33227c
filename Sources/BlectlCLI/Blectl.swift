import BlueZKit
import DBusKit
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The blectl program: parse, run one subcommand, report, exit with a documented status.
/// Its one public entry point is ``start()``, for the executable's `main.swift`. As a
/// command, the root of the command line: the global options, `--version`, the subcommands.
public struct Blectl: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        name: "blectl",
        abstract: "Probe Bluetooth LE devices through BlueZ.",
        showsVersion: true,
        // Upcast one by one: the array's cast would look each conformance up at run time.
        subcommands: Subcommands.all.map { $0 as any ParsableCommand.Type } + [CompletionsCommand.self, HelpCommand.self],
        extraSections: [exitStatus]
    )

    /// Exit statuses, shown in the top-level help.
    static let exitStatus = HelpSection(
        title: "EXIT STATUS",
        rows: ExitStatus.allCases.map { (String($0.rawValue), $0.summary) }
            + [("129", "Interrupted by SIGHUP."), ("130", "Interrupted by SIGINT."),
               ("141", "Standard output's reader went away (SIGPIPE)."), ("143", "Interrupted by SIGTERM.")],
        textColumn: 8
    )

    @OptionGroup var global: GlobalOptions

    /// Runs blectl with the process's arguments, taken as bytes (one that is not valid UTF-8
    /// is a usage error, 64, rather than repaired to U+FFFD), from synchronous code (the
    /// program's `main.swift`): what needs no bus (a usage error, `--help`, `--version`, a
    /// completion script) is answered here without starting Swift concurrency or Dispatch's
    /// threads; everything else runs in a task, with Dispatch's main queue serving the main
    /// actor as under an async `main`. Exits.
    public static func start() -> Never {
        StandardStreams.reserve()
        let started = ContinuousClock.now
        switch RawArguments.decode(RawArguments.fromProcess()) {
        case .failure(let error):
            Printer.write(renderUsageError(error), to: .stderr)
            exit(ExitStatus.usage.rawValue)
        case .success(let arguments):
            let invocation = parseOrExit(arguments)
            answerWithoutBus(invocation)
            let launch = Launch(invocation, started: started)
            Task { await run(invocation, launch) }
            dispatchMain()
        }
    }

    /// What a subcommand's run starts with, made before its task: SIGPIPE ignored (a closed
    /// stdout must come back from write(2) as EPIPE, to clean up and then end by SIGPIPE, not
    /// kill blectl with its connection up; libdbus leaves SIGPIPE alone for DBusKit's
    /// connections), the observer, and, for a subcommand on a ``CommandContext``, its session
    /// already opening, so that the connect, `Hello` and GetManagedObjects overlap the rest of
    /// blectl's start (its first task, its signal handlers).
    private struct Launch: Sendable {
        var observer: (any SessionObserver)?
        var opening: Session.Opening?

        init(_ invocation: Invocation, started: ContinuousClock.Instant) {
            guard case .run(let global, let subcommand) = invocation else { return }
            signal(SIGPIPE, SIG_IGN)
            observer = Blectl.observer(for: global, started: started)
            if !(subcommand.command is any SessionOpeningSubcommand) { opening = Session.Opening(observer: observer) }
        }
    }

    /// The parsed command line, or exit 64 with the usage error on stderr.
    private static func parseOrExit(_ arguments: [String]) -> Invocation {
        switch parseCommandLine(arguments) {
        case .failure(let error):
            Printer.write(renderUsageError(error), to: .stderr)
            exit(ExitStatus.usage.rawValue)
        case .success(let parsed):
            return parsed
        }
    }

    /// Help, the version, completion scripts and the man page: printed, and exit; returns for
    /// the rest.
    private static func answerWithoutBus(_ invocation: Invocation) {
        switch invocation {
        case .help(let text):
            printOrExit(text)
        case .version:
            printOrExit("blectl \(version)\n")
        case .completionScript(let script):
            printOrExit(script)
        case .manualPage:
            var page = ""
            while let line = readLine(strippingNewline: false) { page += line }
            do throws(ManualPage.Problem) {
                printOrExit(try ManualPage.update(page, root: spec))
            } catch {
                Printer.write("blectl \(ManualPage.word): \(error)\n", to: .stderr)
                exit(1)
            }
        case .completionValues, .run:
            return
        }
    }

    /// Runs an invocation that needs the bus (after ``answerWithoutBus(_:)``) and exits.
    private static func run(_ invocation: Invocation, _ launch: Launch) async -> Never {
        switch invocation {
        case .help, .version, .completionScript, .manualPage:
            answerWithoutBus(invocation)
            exit(0)
        case .completionValues(let kind):
            // Quiet for any failure of the bus; a reader that has gone ends it by SIGPIPE (141),
            // as for every command.
            signal(SIGPIPE, SIG_IGN)
            let lines = await CompletionValues.lines(kind, limit: CompletionValues.limit(getenv(CompletionValues.limitVariable).map { String(cString: $0) }))
            signal(SIGPIPE, SIG_DFL)
            printOrExit(lines.map { $0 + "\n" }.joined())
        case .run(let global, let subcommand):
            let observer = launch.observer
            let signals = SignalHandling()
            let work = Task { try await run(global, subcommand, observer: observer, opening: launch.opening) }
            signals.install { work.cancel() }
            let result = await work.result
            StatusLine.shared.finish()
            (observer as? BusTrace)?.finish()
            if let sig = signals.firstSignal {
                // Lines already queued get a moment to reach a reader that is reading.
                await StdoutWriter.shared.drain(within: .milliseconds(200))
                SignalHandling.die(by: sig)
            }
            switch result {
            case .success:
                exit(0)
            case .failure(is OutputClosed):
                SignalHandling.die(by: SIGPIPE)
            case .failure(let error):
                let status = ExitStatus(for: error)
                Printer(format: global.format).error(error, status: status, address: subcommand.address?.description)
                exit(status.rawValue)
            }
        }
    }

    /// Writes help or the version to stdout and exits 0, or 74 with the reason on stderr
    /// when the write fails (a closed pipe ends blectl by SIGPIPE, still the default here).
    private static func printOrExit(_ text: String) -> Never {
        if let error = Printer.writeAll(Array(text.utf8), to: Printer.Stream.stdout.rawValue) {
            let failure = OutputFailed(errno: error)
            Printer.write("blectl: error: \(failure)\n", to: .stderr)
            exit(failure.status.rawValue)
        }
        exit(0)
    }

    /// What watches the session: the D-Bus trace with `-v`; else the progress line, when
    /// stderr is a terminal (not TERM=dumb) and `-q` is not given (started here); else nothing.
    static func observer(for global: GlobalOptions, started: ContinuousClock.Instant) -> (any SessionObserver)? {
        if global.verbosity > 0 {
            let trace = BusTrace(level: global.verbosity, start: started)
            trace.connecting(to: BusConnection.systemBusAddress)
            return trace
        }
        guard !global.quiet, isatty(2) == 1, getenv("TERM").map({ String(cString: $0) }) != "dumb" else { return nil }
        StatusLine.shared.start(stdoutIsTerminal: isatty(1) == 1)
        StatusLine.shared.show("connecting to bluetoothd")
        return ProgressObserver()
    }

    static func run(_ global: GlobalOptions, _ subcommand: Subcommand, observer: (any SessionObserver)? = nil,
                    opening: Session.Opening? = nil) async throws {
        // `--timeout` bounds the whole command, clean-up included: past the deadline clean-up
        // only puts its calls on the wire (CommandDeadline).
        let command = subcommand.command
        let deadline = ContinuousClock.now + command.timeout
        if let command = command as? any SessionOpeningSubcommand {
            var failure: (any Error)?
            do {
                try await CommandDeadline.$instant.withValue(deadline) {
                    try await command.run(global: global, printer: Printer(format: global.format), deadline: deadline,
                                          observer: observer)
                }
            } catch {
                failure = error
            }
            try await drainStdout(thenThrow: failure)
            return
        }
        let context = try await CommandContext.open(global, deadline: deadline, requirement: type(of: command).adapterRequirement,
                                                    retryPolicy: RetryPolicy(retries: command.retries), observer: observer, opening: opening)
        var failure: (any Error)?
        do {
            try await CommandDeadline.$instant.withValue(deadline) {
                try await command.run(context)
            }
        } catch {
            failure = await context.refined(error)
        }
        await context.session.connection.flush(within: CleanupPolicy.wireTime)
        context.session.close()
        // bluetoothd is as blectl found it; now stdout's reader takes what is queued.
        try await drainStdout(thenThrow: failure)
    }

    /// Waits until stdout's reader has taken every queued line, as from any filter (a signal
    /// ends the wait), then throws `failure` if there is one: a failure is reported whether
    /// or not the output could be written; a write error is thrown only after a success.
    private static func drainStdout(thenThrow failure: (any Error)?) async throws {
        do {
            try await StdoutWriter.shared.drain()
        } catch where failure == nil {
            throw error
        } catch {}
        if let failure { throw failure }
    }
}

extension Subcommand {
    /// The device the subcommand works on, if any.
    var address: BluetoothAddress? { command.deviceAddress }
}
