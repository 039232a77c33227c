#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Records {
    /// Now on the wall clock (CLOCK_REALTIME) as the duration since the Unix epoch, as the
    /// `time` of a record blectl stamps itself (``rfc3339(sinceEpoch:)``).
    static func wallClockNow() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    /// An instant given as the duration since the Unix epoch, as RFC 3339 in UTC with
    /// milliseconds (truncated): `2026-11-30T08:15:02.047Z`.
    static func rfc3339(sinceEpoch: Duration) -> String {
        let (seconds, attoseconds) = sinceEpoch.components
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let millis = Int(attoseconds / 1_000_000_000_000_000)
        let year = Int(parts.tm_year) + 1900
        // Written into 24 bytes (a record per sighting makes one: no String per field).
        guard (0...9999).contains(year), (0...999).contains(millis) else {
            func digits(_ value: Int, _ width: Int) -> String {
                let text = String(value)
                return String(repeating: "0", count: max(0, width - text.count)) + text
            }
            return digits(year, 4) + "-" + digits(Int(parts.tm_mon) + 1, 2) + "-" + digits(Int(parts.tm_mday), 2)
                + "T" + digits(Int(parts.tm_hour), 2) + ":" + digits(Int(parts.tm_min), 2) + ":" + digits(Int(parts.tm_sec), 2)
                + "." + digits(millis, 3) + "Z"
        }
        return String(unsafeUninitializedCapacity: 24) { out in
            func put(_ value: Int, _ width: Int, at start: Int) {
                var value = value
                for i in stride(from: start + width - 1, through: start, by: -1) {
                    out[i] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, 4, at: 0); out[4] = UInt8(ascii: "-")
            put(Int(parts.tm_mon) + 1, 2, at: 5); out[7] = UInt8(ascii: "-")
            put(Int(parts.tm_mday), 2, at: 8); out[10] = UInt8(ascii: "T")
            put(Int(parts.tm_hour), 2, at: 11); out[13] = UInt8(ascii: ":")
            put(Int(parts.tm_min), 2, at: 14); out[16] = UInt8(ascii: ":")
            put(Int(parts.tm_sec), 2, at: 17); out[19] = UInt8(ascii: ".")
            put(millis, 3, at: 20); out[23] = UInt8(ascii: "Z")
            return 24
        }
    }
}

/// Writes ``Records/rfc3339(sinceEpoch:)`` as a JSON string (in quotes) into a line, its date
/// and time to the second made once per second: a stream of records (`notify`, `scan
/// --updates`) then makes no String and no `gmtime_r` call per record.
struct RFC3339Writer {
    private var second: Int64?                 // nil until the first record
    private var dateAndTime: [UInt8] = []      // `"YYYY-MM-DDTHH:MM:SS.` of `second`

    mutating func append(_ sinceEpoch: Duration, to line: inout [UInt8]) {
        let (seconds, attoseconds) = sinceEpoch.components
        let millis = Int(attoseconds / 1_000_000_000_000_000)
        guard (0...999).contains(millis) else {
            JSONValue.writeString(Records.rfc3339(sinceEpoch: sinceEpoch), into: &line)
            return
        }
        if seconds != second {
            second = seconds
            dateAndTime = Array(("\"" + String(Records.rfc3339(sinceEpoch: .seconds(seconds)).dropLast(4))).utf8)
        }
        line += dateAndTime
        line.append(UInt8(ascii: "0") + UInt8(millis / 100))
        line.append(UInt8(ascii: "0") + UInt8(millis / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(millis % 10))
        line.append(UInt8(ascii: "Z"))
        line.append(UInt8(ascii: "\""))
    }
}
