import BlueZKit

/// A line of `scan`: what a device advertised (``Advertisement``) and when this scan first
/// heard it, the `first_seen` of its record.
struct ScanSighting: DeviceRecordSource, Equatable {
    var advertisement: Advertisement
    /// When this scan first heard the device: its first sighting's
    /// ``Advertisement/receivedAt``, or that of its first sighting after it was last
    /// reported lost (`--lost-after`).
    var firstSeen: FirstSeen

    var properties: DeviceProperties { advertisement.properties }
    var address: BluetoothAddress { advertisement.address }
    var name: String? { advertisement.name }
    /// This sighting's time, the record's `time` and `last_seen`.
    var receivedAt: Duration { advertisement.receivedAt }

    /// A sighting that is its device's first (`first_seen` is its own time).
    init(_ advertisement: Advertisement) {
        self.init(advertisement, firstSeen: FirstSeen(advertisement.receivedAt))
    }

    init(_ advertisement: Advertisement, firstSeen: FirstSeen) {
        self.advertisement = advertisement
        self.firstSeen = firstSeen
    }

    /// A device's first sighting's time, kept with its JSON string, made once per device
    /// rather than per line.
    struct FirstSeen: Sendable, Equatable, JSONFieldValue {
        /// The wall-clock time since the Unix epoch.
        let sinceEpoch: Duration
        /// ``text`` as a JSON string, in quotes (it needs no escape).
        private let json: [UInt8]

        init(_ sinceEpoch: Duration) {
            self.sinceEpoch = sinceEpoch
            json = Array("\"\(Records.rfc3339(sinceEpoch: sinceEpoch))\"".utf8)
        }

        /// ``sinceEpoch`` as ``Records/rfc3339(sinceEpoch:)`` writes it.
        var text: String { String(decoding: json.dropFirst().dropLast(), as: UTF8.self) }
        var jsonValue: JSONValue { .string(text) }
        func write(to lines: inout JSONLines) { lines.bytes += json }
    }
}

/// The line of `scan --lost-after` for a device printed during this scan and not heard since
/// for that long: `{"event": "lost", "address": ..., "last_seen": RFC 3339}`, its keys in
/// the order of `notify --reconnect`'s events.
struct ScanLostEvent: Sendable, Equatable {
    var address: BluetoothAddress
    /// When the device was last heard, as the wall-clock time since the Unix epoch.
    var lastSeen: Duration

    /// The value of its `event` key, the key that tells it from a device's record (which has none).
    static let event = "lost"

    static let layout = RecordLayout<ScanLostEvent>([
        RecordField("event", constant: event, text: event),
        RecordField("address", json: { $0.address.description }, text: { $0.address.description }),
        RecordField("last_seen", json: { RFC3339Time(sinceEpoch: $0.lastSeen) }, text: { Records.rfc3339(sinceEpoch: $0.lastSeen) }),
    ])

    /// The event as a row of the text table: the address in its column, then
    /// `lost, last seen TIME` across the others.
    var textRow: String {
        Records.fixedWidthRow([address.description, "lost, last seen " + Records.rfc3339(sinceEpoch: lastSeen)],
                              widths: [17, 0])
    }
}
