import DBusKit

extension ObjectCache {
    /// One object's properties on one interface, as bluetoothd sent them (an `a{sv}`:
    /// property name → value, the variant around each value unwrapped, as
    /// ``DBusValue/stringKeyedDictionary`` gives them), read like a dictionary.
    ///
    /// Kept packed: one byte buffer per object and interface, the values decoded when read
    /// (a scan caches tens of thousands of devices, and packs each straight from the signal
    /// that carried it). Reading one property walks the record (some twenty entries for a
    /// Device1); ``dictionary`` decodes them all at once. Not a `Collection`: use
    /// ``dictionary`` for `mapValues`, `filter` and the like.
    public struct Properties: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
        var packed: PackedProperties

        init(packed: PackedProperties) { self.packed = packed }

        /// No properties.
        public init() { packed = PackedProperties() }

        /// The properties of `dictionary`.
        public init(_ dictionary: [String: DBusValue]) { packed = PackedProperties(dictionary) }

        /// The properties written out (`["RSSI": .int16(-60)]`); a name given twice keeps its
        /// last value.
        public init(dictionaryLiteral elements: (String, DBusValue)...) {
            self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
        }

        /// The value of property `name` (nil when absent); setting nil removes it.
        public subscript(name: String) -> DBusValue? {
            get { packed.value(of: name) }
            set {
                if let newValue {
                    packed.merge([name: newValue], invalidated: [])
                } else {
                    packed.merge([:], invalidated: [name])
                }
            }
        }

        /// The property names, in the order the iteration gives them (as bluetoothd sent them,
        /// later changes last).
        public var keys: [String] { packed.keys }
        /// How many properties there are.
        public var count: Int { packed.count }
        /// Whether there are none.
        public var isEmpty: Bool { packed.isEmpty }

        /// Every property, decoded.
        public var dictionary: [String: DBusValue] { packed.dictionary }

        /// The properties, decoded, in the order of ``keys``.
        public func makeIterator() -> IndexingIterator<[(key: String, value: DBusValue)]> { packed.entries.makeIterator() }

        /// The same names with the same values (in any order).
        public static func == (lhs: Properties, rhs: Properties) -> Bool {
            lhs.packed == rhs.packed || lhs.dictionary == rhs.dictionary
        }

        /// The properties as a dictionary prints them.
        public var description: String { dictionary.description }

        /// PropertiesChanged's fold: `changed` replaces or adds, then `invalidated` removes.
        mutating func fold(_ changed: Properties, invalidated: [String]) {
            packed.merge(changed.packed, invalidated: invalidated)
        }
    }
}
