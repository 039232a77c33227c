import BlueZKit

/// Which of the sightings a scan hears it prints, and when devices are lost: `scan`'s
/// `--updates`, `--min-interval`, `--changes-only` and `--lost-after` over the stream of
/// advertisements discovery yields. A value with no clock of its own: each call is given the
/// time (a monotonic instant), so that tests drive it with made-up times.
///
/// The rules, per device:
/// - Its first sighting is printed at once (with `first_seen` its own time), and so is its
///   first sighting after it was lost.
/// - Without `--updates`, nothing more is printed of it (but its sightings keep it present).
/// - With `--updates` alone, every sighting is printed.
/// - `--min-interval S`: a sighting in which something other than RSSI (and the time)
///   changed since the device's last printed line is printed at once; any other is printed
///   only when S has passed since that line, else held. A newer held sighting replaces the
///   one held before; the newest is printed when S has passed since the last line (``due(at:)``),
///   so the last RSSI heard is at most S old in the output.
/// - `--changes-only`: `--min-interval` with an interval that never ends: a sighting is
///   printed only when something other than RSSI changed, and nothing held is ever printed.
/// - `--lost-after L`: a device not heard for L is lost (``due(at:)`` gives its event, with
///   the time it was last heard) and forgotten; a sighting held for it is printed first, so
///   that the state the event's `last_seen` names is in the output.
struct ScanThrottle {
    /// What a device's later sightings are printed for.
    enum Updates: Equatable, Sendable {
        /// Only its first sighting (`scan` without `--updates`).
        case none
        /// Every sighting (`--updates`).
        case all
        /// At most one line per interval, unless something other than RSSI changed (`--min-interval`).
        case atMostEvery(Duration)
        /// Only sightings in which something other than RSSI changed (`--changes-only`).
        case changesOnly
    }

    /// What is printed now for a sighting.
    enum Verdict: Equatable {
        /// The sighting's line, with its device's `first_seen`.
        case print(ScanSighting.FirstSeen)
        /// Nothing (yet): not printed, or held for later.
        case skip
    }

    /// What ``due(at:)`` gives: lines whose time has come.
    enum Due: Equatable {
        /// A held sighting, printed as its device's interval ended.
        case record(ScanSighting)
        /// A device not heard for `--lost-after`.
        case lost(ScanLostEvent)
    }

    let updates: Updates
    /// `--lost-after`: how long a device printed during this scan may go unheard before it
    /// is lost; nil: never lost.
    let lostAfter: Duration?

    /// What is kept of each device printed (and not lost since).
    private struct Device {
        var firstSeen: ScanSighting.FirstSeen
        /// When the device was last heard (kept with `--lost-after`): the monotonic instant,
        /// and the wall-clock time of that sighting.
        var heardAt: ContinuousClock.Instant
        var lastSeen: Duration
    }

    /// What a throttle (`--min-interval`, `--changes-only`) keeps of a device's last line.
    private struct LastLine {
        /// When it was printed.
        var printedAt: ContinuousClock.Instant
        /// Its properties without RSSI (what a change is measured against).
        var printed: DeviceProperties
        /// With `--min-interval`: the newest sighting not printed yet.
        var held: Advertisement?
    }

    private var devices: [BluetoothAddress: Device] = [:]
    private var lastLines: [BluetoothAddress: LastLine] = [:]
    /// Every device printed during this scan, kept when devices are forgotten once lost.
    private var everPrinted: Set<BluetoothAddress> = []

    init(updates: Updates, lostAfter: Duration? = nil) {
        self.updates = updates
        self.lostAfter = lostAfter
    }

    /// Whether the rules need the time of each sighting (``sighted(_:at:)``'s `now`), and
    /// ``due(at:)`` called as time passes; when false, any instant will do for `now`.
    var isTimed: Bool {
        if lostAfter != nil { return true }
        if case .atMostEvery = updates { return true }
        return false
    }

    /// Whether a device's sightings are compared with its last line (a throttle).
    private var comparesLines: Bool {
        switch updates {
        case .none, .all: false
        case .atMostEvery, .changesOnly: true
        }
    }

    /// How many devices have been printed during this scan (each counted once, lost or not).
    var devicesPrinted: Int { lostAfter == nil ? devices.count : everPrinted.count }

    /// Takes a sighting, heard at `now`, and says whether its line is printed now.
    mutating func sighted(_ advertisement: Advertisement, at now: ContinuousClock.Instant) -> Verdict {
        let address = advertisement.address
        guard let i = devices.index(forKey: address) else {
            let firstSeen = ScanSighting.FirstSeen(advertisement.receivedAt)
            devices[address] = Device(firstSeen: firstSeen, heardAt: now, lastSeen: advertisement.receivedAt)
            if lostAfter != nil { everPrinted.insert(address) }
            if comparesLines { printed(advertisement, at: now) }
            return .print(firstSeen)
        }
        if lostAfter != nil {
            devices.values[i].heardAt = now
            devices.values[i].lastSeen = advertisement.receivedAt
        }
        switch updates {
        case .none:
            return .skip
        case .all:
            return .print(devices.values[i].firstSeen)
        case .atMostEvery(let interval):
            guard let line = lastLines[address] else { return .skip }
            if now - line.printedAt >= interval || line.printed != Self.withoutRSSI(advertisement) {
                printed(advertisement, at: now)
                return .print(devices.values[i].firstSeen)
            }
            lastLines[address]?.held = advertisement
            return .skip
        case .changesOnly:
            guard lastLines[address]?.printed != Self.withoutRSSI(advertisement) else { return .skip }
            printed(advertisement, at: now)
            return .print(devices.values[i].firstSeen)
        }
    }

    /// The lines whose time has come at `now`: devices lost, each after the sighting held for
    /// it if any (forgotten here: their next sighting is printed as new), then held sightings
    /// of devices whose interval has ended (each with its own time). In no particular order
    /// between devices.
    mutating func due(at now: ContinuousClock.Instant) -> [Due] {
        var lines: [Due] = []
        if let lostAfter {
            var lost: [BluetoothAddress] = []
            for (address, device) in devices where now - device.heardAt >= lostAfter {
                if let held = lastLines[address]?.held {
                    lines.append(.record(ScanSighting(held, firstSeen: device.firstSeen)))
                }
                lines.append(.lost(ScanLostEvent(address: address, lastSeen: device.lastSeen)))
                lost.append(address)
            }
            for address in lost {
                devices[address] = nil
                lastLines[address] = nil
            }
        }
        if case .atMostEvery(let interval) = updates {
            for i in lastLines.indices {
                let (address, line) = lastLines[i]
                guard let held = line.held, now - line.printedAt >= interval, let device = devices[address] else { continue }
                lastLines.values[i] = LastLine(printedAt: now, printed: Self.withoutRSSI(held))
                lines.append(.record(ScanSighting(held, firstSeen: device.firstSeen)))
            }
        }
        return lines
    }

    /// Records, for a throttle, that `advertisement` is printed at `now`.
    private mutating func printed(_ advertisement: Advertisement, at now: ContinuousClock.Instant) {
        lastLines[advertisement.address] = LastLine(printedAt: now, printed: Self.withoutRSSI(advertisement))
    }

    /// What tells a change worth a line from RSSI churn: the properties without RSSI (the
    /// time is not among them).
    private static func withoutRSSI(_ advertisement: Advertisement) -> DeviceProperties {
        var properties = advertisement.properties
        properties.rssi = nil
        return properties
    }
}
