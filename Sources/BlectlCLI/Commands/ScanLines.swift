import BlueZKit

/// What a running `scan` prints: the batches of advertisements discovery yields, and the
/// ticks of time when `--min-interval` or `--lost-after` need them, passed through the
/// scan's filters and its ``ScanThrottle``, written as lines (JSON or the text table) into
/// one buffer per batch or tick.
struct ScanLines {
    /// What the scan's loop takes: a batch of sightings, or time passing.
    enum Input: Sendable {
        case batch([Advertisement])
        case tick
    }

    private var throttle: ScanThrottle
    private let layout: RecordLayout<ScanSighting>
    private let columns: TextColumns<ScanSighting>
    private let format: OutputFormat
    /// `--count`: the scan ends once this many devices are printed.
    private let count: Int?
    /// `--decoded`: the beacon formats a device must advertise in (none: any).
    private let formats: [AdvertisedFormats.Name]
    /// The instant given to an untimed throttle, which needs none.
    private let origin = ContinuousClock.now
    private var headerPrinted = false
    /// The lines of the last batch or tick, to be printed.
    private var output = JSONLines()
    /// Whether the lines written include that of the `--count`-th device: the last.
    private(set) var countReached = false
    /// Whether the last tick made lines (a tick that made none prints nothing).
    private var tickPrinted = true
    /// `--mqtt`: where each record (and, with `--lost-after`, each device's presence) is
    /// published too.
    private let publisher: MQTTPublisher?
    /// With `--mqtt` and `--lost-after`: the devices whose presence topic says `online`.
    private var present: Set<BluetoothAddress> = []

    init(throttle: ScanThrottle, layout: RecordLayout<ScanSighting>, columns: TextColumns<ScanSighting>,
         format: OutputFormat, count: Int?, formats: [AdvertisedFormats.Name], publisher: MQTTPublisher? = nil) {
        self.throttle = throttle
        self.layout = layout
        self.columns = columns
        self.format = format
        self.count = count
        self.formats = formats
        self.publisher = publisher
    }

    /// Whether time passing makes lines (the throttle holds updates or loses devices).
    var isTimed: Bool { throttle.isTimed }

    /// How often time is looked at: a quarter of the shortest of `--min-interval` and
    /// `--lost-after`, between 10 and 250 ms (how late a held line or a lost event may be).
    var tickPeriod: Duration {
        var shortest = throttle.lostAfter ?? .seconds(1)
        if case .atMostEvery(let interval) = throttle.updates { shortest = min(shortest, interval) }
        return min(max(shortest / 4, .milliseconds(10)), .milliseconds(250))
    }

    /// Writes the lines of a batch of sightings heard by `now` (ignored when untimed).
    mutating func take(_ batch: [Advertisement], at now: ContinuousClock.Instant? = nil) {
        output.removeAll()
        output.bytes.reserveCapacity(batch.count * 200)
        tickPrinted = true
        let now = now ?? origin
        for advertisement in batch {
            guard ScanCommand.hasFormat(advertisement, among: formats) else { continue }
            guard case .print(let firstSeen) = throttle.sighted(advertisement, at: now) else { continue }
            append(ScanSighting(advertisement, firstSeen: firstSeen))
            // --count: the line of the Nth device is the last one.
            if let count, throttle.devicesPrinted >= count {
                countReached = true
                break
            }
        }
    }

    /// Writes the lines due at `now`: held updates whose interval has ended, lost devices.
    mutating func takeDue(at now: ContinuousClock.Instant) {
        output.removeAll()
        let due = throttle.due(at: now)
        tickPrinted = !due.isEmpty
        for line in due {
            switch line {
            case .record(let sighting): append(sighting)
            case .lost(let event):
                if let publisher, present.remove(event.address) != nil {
                    publisher.publishState(MQTTTopics.offline, to: publisher.topics.presence(event.address))
                }
                switch format {
                case .json: ScanLostEvent.layout.appendLine(event, to: &output)
                case .text: appendText(event.textRow)
                }
            }
        }
    }

    /// Prints what the last batch or tick wrote, and the number of devices on the status line.
    func print(to printer: Printer, status: StatusLine) async throws {
        guard tickPrinted else { return }
        let devices = throttle.devicesPrinted
        status.show("scanning", detail: devices == 1 ? "1 device" : "\(devices) devices")
        try await printer.results(utf8: output.bytes)
    }

    private mutating func append(_ sighting: ScanSighting) {
        let start = output.bytes.count
        switch format {
        case .json: layout.appendLine(sighting, to: &output)
        case .text: appendText(Records.fixedWidthRow(columns.cells(sighting), widths: columns.widths))
        }
        if let publisher {
            let address = sighting.advertisement.address
            publisher.publish(sighting, layout: layout, appendedTo: format == .json ? output : nil, from: start,
                              to: publisher.topics.advertisement(address))
            if throttle.lostAfter != nil, present.insert(address).inserted {
                publisher.publishState(MQTTTopics.online, to: publisher.topics.presence(address))
            }
        }
    }

    /// Appends a row of the text table, after its header when it is the first.
    private mutating func appendText(_ row: String) {
        if !headerPrinted {
            output.bytes += Records.fixedWidthRow(columns.headers, widths: columns.widths).utf8
            output.bytes.append(UInt8(ascii: "\n"))
            headerPrinted = true
        }
        output.bytes += row.utf8
        output.bytes.append(UInt8(ascii: "\n"))
    }

    /// `stream`'s batches with a tick every `period` between them, until the stream ends (as
    /// it ends) or the loop reading them stops or is cancelled: the ticks then stop too, so
    /// that nothing outlives the scan.
    static func withTicks(_ stream: AsyncThrowingStream<[Advertisement], any Error>,
                          every period: Duration) -> AsyncThrowingStream<Input, any Error> {
        let (inputs, continuation) = AsyncThrowingStream.makeStream(of: Input.self)
        let forwarding = Task {
            do {
                for try await batch in stream { continuation.yield(.batch(batch)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let ticking = Task {
            while (try? await Task.sleep(for: period)) != nil {
                continuation.yield(.tick)
            }
        }
        continuation.onTermination = { _ in
            forwarding.cancel()
            ticking.cancel()
        }
        return inputs
    }
}
