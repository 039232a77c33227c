/// A few values keyed by libdbus handles (a watch, a timeout): a connection has one to three
/// of each, so a linear search of an array is as fast as hashing.
///
/// Why not a `Dictionary<OpaquePointer, Value>`: the first use of a dictionary with a new key
/// type makes the Swift runtime look up the key's `Hashable` conformance, a scan of the
/// binary's conformance tables that cost every start-up some 64,000 instructions (issue 12).
struct HandleTable<Value> {
    private var entries: [(handle: OpaquePointer, value: Value)] = []

    subscript(handle: OpaquePointer) -> Value? {
        get {
            for entry in entries where entry.handle == handle { return entry.value }
            return nil
        }
        set {
            let index = entries.firstIndex { $0.handle == handle }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((handle, value))
            case (nil, nil): break
            }
        }
    }

    /// Removes the value for `handle` and returns it; nil when there was none.
    mutating func removeValue(forKey handle: OpaquePointer) -> Value? {
        guard let index = entries.firstIndex(where: { $0.handle == handle }) else { return nil }
        return entries.remove(at: index).value
    }

    /// Every value, in the order added.
    var values: [Value] { entries.map(\.value) }

    mutating func removeAll() { entries.removeAll() }
}
