import Testing
@testable import DBusKit

/// ``ReplyTable``: the handlers of calls in flight, in an array up to ``ReplyTable/arrayLimit``
/// and in a dictionary past it; either way each reply finds its own handler, once.
@Suite struct ReplyTableTests {
    /// A handler that records the serial it was registered for into `log`.
    private static func handler(_ serial: UInt32, _ log: Lock<[UInt32]>) -> ReplyTable.Handler {
        { _ in log.withLock { $0.append(serial) } }
    }

    @Test(arguments: [3, ReplyTable.arrayLimit, ReplyTable.arrayLimit + 1, 5 * ReplyTable.arrayLimit])
    func eachReplyFindsItsHandlerOnce(calls: Int) {
        let log = Lock<[UInt32]>([])
        var table = ReplyTable()
        let serials = (0..<calls).map { UInt32(1000 + 7 * $0) }
        for serial in serials { table.insert(Self.handler(serial, log), for: serial) }
        #expect(table.count == calls)
        // Answered out of order: every other call, then the rest backwards.
        let order = serials.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            + serials.enumerated().filter { $0.offset % 2 == 1 }.map(\.element).reversed()
        for serial in order {
            let found = table.remove(serial)
            #expect(found != nil, "no handler for \(serial)")
            found?(.failure(.disconnected))
            #expect(table.remove(serial) == nil, "a second reply to \(serial) found a handler")
        }
        #expect(log.withLock { $0 } == order)
        #expect(table.count == 0)
        #expect(table.remove(999) == nil)
    }

    @Test(arguments: [2, ReplyTable.arrayLimit + 10])
    func removeAllHandsBackEveryHandlerInSendOrder(calls: Int) {
        let log = Lock<[UInt32]>([])
        var table = ReplyTable()
        let serials = (1...calls).map { UInt32($0) }
        for serial in serials { table.insert(Self.handler(serial, log), for: serial) }
        _ = table.remove(2)
        let handlers = table.removeAll()
        for handler in handlers { handler(.failure(.disconnected)) }
        #expect(log.withLock { $0 } == serials.filter { $0 != 2 })
        #expect(table.count == 0)
        // Usable again, from the array.
        table.insert(Self.handler(77, log), for: 77)
        #expect(table.count == 1)
        #expect(table.remove(77) != nil)
    }
}

/// ``HandleTable``: values keyed by libdbus handles.
@Suite struct HandleTableTests {
    @Test func setReplaceRemove() {
        let a = OpaquePointer(bitPattern: 0x1000)!, b = OpaquePointer(bitPattern: 0x2000)!, c = OpaquePointer(bitPattern: 0x3000)!
        var table = HandleTable<String>()
        table[a] = "a"
        table[b] = "b"
        #expect(table[a] == "a")
        #expect(table[b] == "b")
        #expect(table[c] == nil)
        table[a] = "A"
        #expect(table.values == ["A", "b"])
        table[b] = nil
        #expect(table[b] == nil)
        #expect(table.removeValue(forKey: a) == "A")
        #expect(table.removeValue(forKey: a) == nil)
        table[c] = "c"
        #expect(table.values == ["c"])
        table.removeAll()
        #expect(table.values.isEmpty)
    }
}

/// The AddMatch rule string (D-Bus specification, "Match Rules").
@Suite struct MatchRuleStringTests {
    @Test func everyKeyInOrderAndQuotesEscaped() {
        let rule = MatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                             path: nil, pathNamespace: ObjectPath("/org/bluez"), arg0: "it's")
        #expect(rule.description == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='/org/bluez',arg0='it'\\''s'")
        #expect(MatchRule().description == "type='signal'")
        // Quotes beside multi-byte characters (the escape works on UTF-8 bytes).
        #expect(MatchRule(arg0: "é'ü''").description == "type='signal',arg0='é'\\''ü'\\'''\\'''")
        #expect(MatchRule(path: ObjectPath("/a")).description == "type='signal',path='/a'")
    }
}
