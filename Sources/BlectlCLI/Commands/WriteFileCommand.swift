import BlueZKit

/// `blectl write ADDR CHARACTERISTIC --without-response --file PATH|-`: the streaming form of
/// `write` (``WriteFile``), declared here on its own until it joins the plain
/// `write ADDR CHARACTERISTIC VALUE` command: that command then declares `--file` too
/// (``WriteFile/fileOption``, `<value>` optional), checks the line with
/// ``WriteFile/checkUsage(file:hasValue:withoutResponse:text:subcommand:)`` and, when
/// `--file` is given, runs ``WriteFile/run(address:context:)``; this file goes.
struct WriteFileCommand: BlectlSubcommand {
    static let withoutResponse = Flag(
        "without-response",
        help: "Write without response (ATT Write Command): nothing acknowledges it. Required with --file."
    )

    static let command = CommandSpec(
        name: "write",
        abstract: "Stream a file to a characteristic, written without response.",
        discussion: [
            "With --without-response --file PATH (or - for standard input), sends the bytes as write-without-response packets of the link's maximum size, MTU - 3 bytes each but the last: through the socket BlueZ hands over with AcquireWrite, waiting whenever it is full, or, when BlueZ refuses AcquireWrite, by WriteValue with type command. Prints address, service, characteristic, bytes, packets, mtu, acquired and seconds once BlueZ has taken every packet.",
            "--timeout bounds finding, connecting and acquiring, and then each wait for the link to take the next packet; reading the input has no limit.",
        ],
        arguments: [DeviceOptions.addressArgument.spec, GATTTarget.characteristicArgument.spec],
        options: [GATTTarget.serviceOption.spec, withoutResponse.spec, WriteFile.fileOption.spec, DeviceOptions.timeoutOption.spec]
    )

    var options: DeviceOptions
    var stream: WriteFile
    var timeout: Duration { options.timeout }
    var address: BluetoothAddress? { options.address }

    init(options: DeviceOptions, stream: WriteFile) {
        self.options = options
        self.stream = stream
    }

    init(from values: ParsedValues) throws(UsageError) {
        options = try DeviceOptions(from: values)
        let file = try values.value(of: WriteFile.fileOption)
        guard let file else {
            throw UsageError("Missing '--file': this build writes streams only (write <address> <characteristic> --without-response --file <path>)",
                             subcommand: Self.command.name)
        }
        try WriteFile.checkUsage(file: file, hasValue: false, withoutResponse: values.isSet(Self.withoutResponse))
        stream = WriteFile(target: try GATTTarget(from: values), source: file, timeout: options.timeout)
    }

    func run(_ context: CommandContext) async throws {
        try await stream.run(address: options.address, context: context)
    }
}
