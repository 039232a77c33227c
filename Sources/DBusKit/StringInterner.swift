#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The last few header strings read from libdbus (a signal's sender and object path), handed
/// out again when the same bytes come again: a notification stream carries the same sender
/// and characteristic path in every signal, and a String made anew each time costs its
/// UTF-8 check, an allocation for a path longer than 15 bytes and its release (issue 12).
/// A string handed out again is the same storage, so `==` against it is decided on identity.
///
/// Queue-confined: one per connection, used on its queue only.
struct StringInterner {
    /// How many recent strings are kept (a sender and the paths of a few objects in turn).
    static let capacity = 4

    private var recent: [String] = []
    private var next = 0

    /// The string whose UTF-8 is the NUL-terminated `pointer`: a recent one when the bytes
    /// are the same, else a new one (then kept, replacing the oldest).
    mutating func string(_ pointer: UnsafePointer<CChar>) -> String {
        let length = strlen(pointer)
        for index in recent.indices {
            let same = recent[index].utf8.withContiguousStorageIfAvailable {
                $0.count == length && memcmp($0.baseAddress!, pointer, length) == 0
            }
            if same == true { return recent[index] }
        }
        let made = String(cString: pointer)
        if recent.count < Self.capacity {
            recent.append(made)
        } else {
            recent[next] = made
            next = (next + 1) % Self.capacity
        }
        return made
    }
}
