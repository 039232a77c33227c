import BlueZKit

/// One blectl subcommand, whole: its names and help (``ParsableCommand/configuration``), its
/// arguments and options (its properties, each declared once with `@Argument`, `@Option`,
/// `@Flag` or `@OptionGroup`, from which the parser, the help text, the usage errors, the
/// completions and the man page's synopsis and options are made), what it does, and the
/// records it prints. Each lives in one file under `Commands/`; adding one means that file,
/// its line in ``Subcommands/all``, its tests and its man-page section.
protocol BlectlSubcommand: ParsableCommand, Equatable {
    /// The limit for the whole command (`--timeout`), start-up included.
    var timeout: Duration { get }
    /// The device the command works on, named in the error object; nil for none.
    var deviceAddress: BluetoothAddress? { get }
    /// `--retries` of the commands that connect to a device (``RetryPolicy``); 0 for the others.
    var retries: Int { get }
    /// What the command needs of the adapter before it runs (checked by
    /// ``CommandContext/open(_:timeout:requirement:)``); `.powered` unless it says otherwise.
    static var adapterRequirement: AdapterRequirement { get }
    /// Runs the command: results on stdout through `context.printer`, failures thrown.
    func run(_ context: CommandContext) async throws
}

extension BlectlSubcommand {
    var deviceAddress: BluetoothAddress? { nil }
    var retries: Int { 0 }
    static var adapterRequirement: AdapterRequirement { .powered }

    func isEqual(to other: any BlectlSubcommand) -> Bool { (other as? Self) == self }
}

/// A subcommand for which the bus, bluetoothd and the adapter are findings rather than
/// preconditions (`doctor`): it opens its session itself, instead of being handed a
/// ``CommandContext``.
protocol SessionOpeningSubcommand: BlectlSubcommand {
    /// Runs the command within `deadline`: results through `printer`, failures thrown
    /// (after the results); `observer` (the `-v` trace, the progress line) sees the session
    /// it opens.
    func run(global: GlobalOptions, printer: Printer, deadline: ContinuousClock.Instant,
             observer: (any SessionObserver)?) async throws
}

extension SessionOpeningSubcommand {
    static var adapterRequirement: AdapterRequirement { .none }

    func run(_ context: CommandContext) async throws {
        try await run(global: GlobalOptions(adapter: context.adapterName, format: context.printer.format),
                      printer: context.printer, deadline: context.deadline, observer: nil)
    }
}

/// What a subcommand needs of the adapter before it runs; the adapter chosen is
/// ``CommandContext/adapter``. A requirement not met ends blectl with 69 (`unavailable`).
enum AdapterRequirement: Sendable, Equatable {
    /// A powered adapter: the one `--adapter` names, which must be powered, else the first
    /// powered one. For everything that scans or connects.
    case powered
    /// An adapter, powered or not: the one named, else the first powered one, else the first
    /// one. For reading what BlueZ knows (its cached objects) without the radio.
    case present
    /// None: the command works with the bus and bluetoothd alone (it lists adapters itself),
    /// and ``CommandContext/adapter`` throws.
    case none
}

/// Every subcommand, in the order the top-level help lists them.
enum Subcommands {
    static let all: [any BlectlSubcommand.Type] = [
        ScanCommand.self, ConnectCommand.self, GetVersionCommand.self, GetBatteryCommand.self,
        ReadCommand.self, WriteCommand.self, RequestCommand.self, NotifyCommand.self, DisconnectCommand.self,
        InfoCommand.self, DevicesCommand.self, AdaptersCommand.self,
        PairCommand.self, UnpairCommand.self, AdvertiseCommand.self, ServeCommand.self, DoctorCommand.self,
    ]

    /// The subcommand whose canonical name is `name`.
    static func type(named name: String) -> (any BlectlSubcommand.Type)? {
        all.first { $0.configuration.name == name }
    }
}

/// The subcommand to run, with its parsed options.
struct Subcommand: Sendable, Equatable, CustomStringConvertible {
    let command: any BlectlSubcommand

    init(_ command: any BlectlSubcommand) { self.command = command }

    static func == (lhs: Subcommand, rhs: Subcommand) -> Bool { lhs.command.isEqual(to: rhs.command) }

    var description: String { String(describing: command) }
}
