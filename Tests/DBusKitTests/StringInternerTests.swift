import Testing
@testable import DBusKit

/// The header strings reused from recent signals: always the bytes that came, whichever of
/// the recent ones they match (or none), and a repeat is the stored string itself.
@Suite struct StringInternerTests {
    private static let names = ["/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0011",
                                "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char0012",
                                "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/char001", ":1.5", ":1.50", "",
                                "/org/bluez/hci0/dev_C0_FF_EE_00_00_01/service0010/chär0011", "/"]

    /// Every name in turn, more of them than are kept, then at random: each read is exactly
    /// the bytes given (a prefix, a neighbour or a longer name of a kept one included).
    @Test func eachStringIsTheBytesThatCame() {
        var interner = StringInterner()
        var order = Self.names + Self.names.reversed()
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 { order.append(Self.names.randomElement(using: &generator)!) }
        for name in order {
            let read = name.withCString { interner.string($0) }
            #expect(read == name)
            #expect(Array(read.utf8) == Array(name.utf8))
        }
    }

    /// A string read again while it is among the recent ones is the stored one (same
    /// storage), not a copy; one pushed out by newer ones is read anew, still equal.
    @Test func aRepeatIsTheStoredString() {
        var interner = StringInterner()
        let path = Self.names[0]
        let first = path.withCString { interner.string($0) }
        let again = path.withCString { interner.string($0) }
        #expect(storage(first) == storage(again))
        for other in Self.names[1...StringInterner.capacity] { _ = other.withCString { interner.string($0) } }
        let afterEviction = path.withCString { interner.string($0) }
        #expect(afterEviction == path)
        #expect(storage(afterEviction) != storage(first))
    }

    private func storage(_ string: String) -> UInt? {
        string.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
    }
}
