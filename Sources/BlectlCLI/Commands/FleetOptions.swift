/// `--from`, `--parallel` and `--overall-timeout`: how the commands that take several devices
/// (`get-battery`, `get-version`, `read`, `info`, `disconnect`) take them and pace them
/// (``DeviceCommand``). Each declares the group after its `<address> ...` argument.
struct FleetOptions: ParsableArguments, Equatable {
    /// `--from PATH|-`: more addresses, one a line or JSON Lines with an `address` field.
    @Option("from", valueName: "path",
            help: "Also take the devices from this file (- for standard input), one a line: an address, or a JSON object with an \"address\" field (JSON Lines, as scan prints). Each is started as soon as its line is read; blank lines are skipped, an address given twice is taken once.",
            parser: .inputSource)
    var from: InputSource?

    /// `--parallel N`: devices in progress at once.
    @Option("parallel", valueName: "count",
            help: "Work on at most this many devices at once, 1 to 64.",
            parser: .wholeNumber(in: 1...64))
    var parallel: Int = FleetOptions.defaultParallel

    /// `--overall-timeout`: the limit for the whole run, nil for none.
    @Option("overall-timeout", valueName: "seconds",
            help: "End the whole run after this many seconds, every device not done by then reported as timed out; decimals allowed, more than 0. --timeout is each device's own limit.",
            parser: .seconds(allowingZero: false))
    var overallTimeout: Duration?

    init() {}

    init(from: InputSource? = nil, parallel: Int = FleetOptions.defaultParallel, overallTimeout: Duration? = nil) {
        self.from = from
        self.parallel = parallel
        self.overallTimeout = overallTimeout
    }

    /// Four: the kernel creates LE connections one at a time, so a device's GATT work overlaps
    /// the next ones' connection set-up with a few in progress, while the links a run holds
    /// (each kept up for BlueZ's 2 s disconnect timer after its device is done) stay within
    /// what common controllers take at once.
    static let defaultParallel = 4
}
