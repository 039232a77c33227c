import BlueZKit

/// `blectl scan`: JSON Lines, one per device seen during this scan (or per update with `--updates`).
struct ScanCommand: BlectlSubcommand {
    static let configuration = CommandConfiguration(
        name: "scan",
        abstract: "Scan for Bluetooth LE devices and print each one found.",
        discussion: [
            "Prints one JSON line per device as it is first seen during this scan, until the timeout; reaching the timeout is success, even with no device found. With --count, the scan ends with success once that many devices are printed, and reaching the timeout first exits 124. Devices BlueZ only remembers from earlier are not printed. A device must pass every kind of filter given (--rssi-min checked by BlueZ and again by blectl; --name, --service, --address and --decoded by blectl only). --name matches a device's Name and its Alias (the name its user gave it, as bluetoothctl shows it); the record's name is the Name. Devices that do not advertise as discoverable are found too. --timeout 0 connects, checks the adapter and prints nothing.",
            "Each record has first_seen (when this scan first heard the device) and last_seen. With --updates, --min-interval and --changes-only thin out the lines of RSSI changes; --lost-after prints {\"event\":\"lost\",...} for a device not heard for that long, and then prints its next sighting as new.",
        ]
    )

    /// The accepted `--rssi-min` range in dBm (BlueZ doc/org.bluez.Adapter.rst,
    /// SetDiscoveryFilter `RSSI`).
    static let rssiRange: ClosedRange<Int16> = -127...20

    /// `--timeout`: how long to scan, 0 to 86400 s, or ``ListeningTimeout/infinite`` (`inf`).
    @Option(.timeout(help: "Stop scanning after this many seconds; decimals allowed, inf to scan until interrupted.",
                     parser: .listeningSeconds()))
    var timeout: Duration = .seconds(10)

    /// `--name`, repeatable: report only devices whose Name or Alias contains one of these
    /// (case-insensitive substring match); empty means no name filter. Never contains
    /// an empty string.
    @Option("name", short: "n", valueName: "substring",
            help: "Only report devices whose name, or the alias their user gave them, contains this text, ignoring case. Repeat to accept any of several.",
            parser: .nonEmpty(expecting: "a non-empty part of a device name"))
    var names: [String]

    /// `--service`, repeatable: report only devices whose Device1.UUIDs (advertised, or
    /// found by an earlier connection) list one of these; empty means no service filter.
    @Option("service", short: "s", valueName: "uuid",
            help: "Only report devices that list this service UUID, such as 180f: advertised, or found by an earlier connection. Repeat to accept any of several.",
            parser: .uuid)
    var services: [BluetoothUUID]

    /// `--address`, repeatable: report only devices with one of these addresses; empty
    /// means no address filter (checked by blectl only, see ``DiscoveryFilter/addresses``).
    @Option("address", valueName: "address", help: "Only report the device with this address. Repeat to accept any of several.",
            parser: .address)
    var addresses: [BluetoothAddress]

    /// `--rssi-min`: report only devices heard at this RSSI (dBm) or stronger, within
    /// ``rssiRange``; nil means no threshold.
    @Option("rssi-min", valueName: "dbm",
            help: "Only report devices heard at this signal strength or stronger, in dBm from \(rssiRange.lowerBound) to \(rssiRange.upperBound).",
            parser: .dBm(in: rssiRange))
    var rssiMin: Int16?

    /// `--decoded`, repeatable: report only devices whose manufacturer or service data is in
    /// one of these beacon formats (``AdvertisedFormats``), decodable or not; empty means no
    /// format filter (checked by blectl only).
    @Option("decoded", valueName: "format",
            help: "Only report devices that advertise in this beacon format: \(AdvertisedFormats.Name.choicesList) (shown under decoded, even when undecodable). Repeat to accept any of several.",
            parser: .choice)
    var decodedFormats: [AdvertisedFormats.Name]

    /// `--count`: end the scan with success once this many devices (1 or more) are
    /// printed; reaching the timeout first is then a timeout (124). nil: no limit.
    @Option("count", valueName: "n", help: "Stop after this many devices; if the timeout comes first, exit 124.", parser: .count)
    var count: Int?

    /// `--updates`: print a line for every advertisement update, not just the first
    /// sighting of each device.
    @Flag("updates", help: "Print a line for every advertisement update, not just the first sighting of each device.")
    var updates = false

    /// `--min-interval`, with `--updates`: at most one line per device per this long (more
    /// than 0, up to a day), unless something other than its RSSI changed since its last
    /// line; the newest sighting held meanwhile is printed when the interval ends
    /// (``ScanThrottle``). nil: every update.
    @Option("min-interval", valueName: "seconds",
            help: "With --updates, print each device at most once per this many seconds (decimals allowed), at once when more than its RSSI changed; the newest update held meanwhile is printed when the interval ends.",
            parser: .seconds(allowingZero: false))
    var minInterval: Duration?

    /// `--changes-only`, with `--updates`: print a device again only when something other
    /// than its RSSI changed (``ScanThrottle/Updates/changesOnly``).
    @Flag("changes-only", help: "With --updates, print a device again only when more than its RSSI changed.")
    var changesOnly = false

    /// `--lost-after`: a device printed during this scan and not heard for this long (more
    /// than 0, up to a day) gets a lost event, and its next sighting is printed as new.
    /// nil: devices are never lost.
    @Option("lost-after", valueName: "seconds",
            help: "Print a lost event for a device not heard for this many seconds (decimals allowed); its next sighting is printed as new.",
            parser: .seconds(allowingZero: false))
    var lostAfter: Duration?

    /// `--min-interval` and `--changes-only` shape what `--updates` prints: each needs it,
    /// and they do not go together.
    mutating func validate() throws(UsageError) {
        if minInterval != nil, changesOnly {
            throw UsageError("Give either '--min-interval' or '--changes-only', not both", subcommand: Self.configuration.name)
        }
        if !updates, minInterval != nil || changesOnly {
            throw UsageError("'\(changesOnly ? "--changes-only" : "--min-interval")' needs '--updates'", subcommand: Self.configuration.name)
        }
    }

    /// What is printed of each device's sightings (`--updates`, `--min-interval`, `--changes-only`).
    var throttledUpdates: ScanThrottle.Updates {
        guard updates else { return .none }
        if let minInterval { return .atMostEvery(minInterval) }
        return changesOnly ? .changesOnly : .all
    }

    /// `--bindkey`: the keys that decrypt encrypted BTHome advertisements in `decoded`.
    @OptionGroup var bindKeys: BindKeyOptions

    /// `--mqtt` and its options: each line's record also published to a broker.
    @OptionGroup var mqtt: MQTTOptions

    func run(_ context: CommandContext) async throws {
        guard timeout > .zero else { return }
        bindKeys.reportUnavailableDecryption(context.printer)
        try await mqtt.withPublisher(printer: context.printer) { publisher in try await scan(context, publisher: publisher) }
    }

    private func scan(_ context: CommandContext, publisher: MQTTPublisher?) async throws {
        // A device is heard again only when its advertisement changes unless duplicates are
        // reported: presence needs them as much as --updates does.
        let filter = DiscoveryFilter(uuids: services, rssiMin: rssiMin, names: names, addresses: addresses,
                                     duplicateData: updates || lostAfter != nil)
        let printer = context.printer
        let adapterName = try context.adapter.name
        // The scan ends at the command's deadline: --timeout counts from blectl's start.
        let deadline = context.deadline
        let status = StatusLine.shared
        status.show("scanning", detail: "0 devices")
        let executor = context.session.eventExecutor
        let throttle = ScanThrottle(updates: throttledUpdates, lostAfter: lostAfter)
        try await context.adapter.withDiscovery(filter: filter, setupTimeout: context.remaining) { stream in
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Batches are taken on the session's queue, right after the signals that made
                // them, with no thread hand-off per batch. Nothing here blocks:
                // stdout is written at once only when a pipe has room, else by its own thread.
                group.addTask {
                    try await withTaskExecutorPreference(executor) {
                        var lines = ScanLines(throttle: throttle, layout: Self.layout(adapter: adapterName, bthomeBindKeys: bindKeys.keys),
                                              columns: Self.textColumns(adapter: adapterName), format: printer.format,
                                              count: count, formats: decodedFormats, publisher: publisher)
                        if lines.isTimed {
                            // Held updates and lost devices are due as time passes: ticks come
                            // between the batches, on the same stream.
                            for try await input in ScanLines.withTicks(stream, every: lines.tickPeriod) {
                                switch input {
                                case .batch(let batch): lines.take(batch, at: ContinuousClock.now)
                                case .tick: lines.takeDue(at: ContinuousClock.now)
                                }
                                try await lines.print(to: printer, status: status)
                                if lines.countReached { return }
                            }
                        } else {
                            for try await batch in stream {
                                lines.take(batch)
                                try await lines.print(to: printer, status: status)
                                if lines.countReached { return }
                            }
                        }
                    }
                }
                group.addTask {
                    try await Task.sleep(until: deadline, clock: .continuous)
                    // Reaching the timeout is success, unless --count devices were wanted first.
                    if count != nil { throw BLEError.timedOut(BLEOperation(.discovery)) }
                }
                // Between lines, a reader that has gone ends the scan too.
                group.addTask { try await Printer.waitUntilStdoutClosed() }
                // Reaching the scan length is success (without --count), and so is the
                // --count-th device; an error from the stream (adapter powered off,
                // bluetoothd gone) or a closed stdout ends the scan after what was printed.
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Whether the advertisement carries one of `formats` (true when none are asked for).
    static func hasFormat(_ advertisement: Advertisement, among formats: [AdvertisedFormats.Name]) -> Bool {
        guard !formats.isEmpty else { return true }
        let found = advertisement.properties.advertisedFormats
        return formats.contains(where: found.contains)
    }

    // MARK: - Records

    /// A scan's record: the Device1 properties an advertisement carries
    /// (``DeviceProperties/advertisementTable``, as ``DeviceFields`` shows them), then
    /// whether the device is connected, the adapter that heard it and when (`time`), when
    /// this scan first heard the device (`first_seen`) and last (`last_seen`, this
    /// sighting's time). Encrypted BTHome frames are decrypted with `bthomeBindKeys` (`--bindkey`).
    static func layout(adapter: String, bthomeBindKeys: [BluetoothAddress: BTHomeBindKey] = [:]) -> RecordLayout<ScanSighting> {
        RecordLayout(DeviceFields.fields(DeviceProperties.advertisementTable, for: .scan, bthomeBindKeys: bthomeBindKeys) + [
            DeviceFields.scanConnected(),
            RecordField("adapter", constant: adapter, text: Records.printable(adapter)),
            RecordField("time", json: { RFC3339Time(sinceEpoch: $0.receivedAt) }, text: { Records.rfc3339(sinceEpoch: $0.receivedAt) }),
            RecordField("first_seen", json: { $0.firstSeen }, text: { $0.firstSeen.text }),
            RecordField("last_seen", json: { RFC3339Time(sinceEpoch: $0.receivedAt) }, text: { Records.rfc3339(sinceEpoch: $0.receivedAt) }),
        ])
    }

    static func record(_ s: ScanSighting, adapter: String) -> JSONValue {
        layout(adapter: adapter).object(s)
    }

    /// The text columns: a header, then a column per JSON field, each padded to its width
    /// (lines are printed as devices are heard, so the widths are fixed; a longer value
    /// pushes the rest of its line to the right). UUIDS, the longest, comes last, unpadded;
    /// a field not placed here comes before it.
    static func textColumns(adapter: String) -> TextColumns<ScanSighting> {
        TextColumns(layout(adapter: adapter), [
            ("ADDRESS", .field("address"), 17), ("TYPE", .field("address_type"), 6), ("RSSI", .field("rssi"), 8),
            ("TX_POWER", .field("tx_power"), 8), ("CONNECTED", .field("connected"), 9), ("ADAPTER", .field("adapter"), 7),
            ("TIME", .field("time"), 24), ("FIRST_SEEN", .field("first_seen"), 24), ("NAME", .field("name"), 20), ("APPEARANCE", .field("appearance"), 22),
            ("MANUFACTURER_DATA", .field("manufacturer_data"), 36), ("SERVICE_DATA", .field("service_data"), 28),
            ("UUIDS", .field("uuids"), 0),
        ], othersBefore: "UUIDS", omitted: DeviceFields.scanTextOmitted.union(["last_seen"]))
    }

    /// The header line of the text format, printed with the first device.
    static var textHeader: String {
        let columns = textColumns(adapter: "")
        return Records.fixedWidthRow(columns.headers, widths: columns.widths)
    }

    /// One device as a text row under ``textHeader``: `-` where JSON has null or an empty
    /// list, control characters in names shown as `?`. The SIG's names follow what they
    /// name: `0x03c1 Keyboard`, `05f1=0102 (The Linux Foundation)`, `180f (Battery)`.
    static func text(_ a: ScanSighting, adapter: String) -> String {
        let columns = textColumns(adapter: adapter)
        return Records.fixedWidthRow(columns.cells(a), widths: columns.widths)
    }
}
