#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Records {
    /// An instant given as the duration since the Unix epoch, as RFC 3339 in UTC with
    /// milliseconds (truncated): `2026-11-30T08:15:02.047Z`.
    static func rfc3339(sinceEpoch: Duration) -> String {
        let (seconds, attoseconds) = sinceEpoch.components
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let millis = Int(attoseconds / 1_000_000_000_000_000)
        func digits(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return digits(Int(parts.tm_year) + 1900, 4) + "-" + digits(Int(parts.tm_mon) + 1, 2) + "-" + digits(Int(parts.tm_mday), 2)
            + "T" + digits(Int(parts.tm_hour), 2) + ":" + digits(Int(parts.tm_min), 2) + ":" + digits(Int(parts.tm_sec), 2)
            + "." + digits(millis, 3) + "Z"
    }
}
