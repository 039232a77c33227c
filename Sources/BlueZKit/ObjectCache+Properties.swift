import DBusKit

extension ObjectCache {
    /// One object's properties on one interface, as bluetoothd sent them (an `a{sv}`:
    /// property name → value, each value as sent, variant and all), read like a dictionary.
    ///
    /// Kept packed: one byte buffer per object and interface, the values decoded when read
    /// (a scan caches tens of thousands of devices, and packs each straight from the signal
    /// that carried it). Reading one property walks the record (some twenty entries for a
    /// Device1); ``dictionary`` decodes them all at once.
    public struct Properties: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
        var packed: PackedProperties

        init(packed: PackedProperties) { self.packed = packed }

        /// No properties.
        public init() { packed = PackedProperties() }

        /// The properties of `dictionary`.
        public init(_ dictionary: [String: DBusValue]) { packed = PackedProperties(dictionary) }

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

        /// The property names.
        public var keys: [String] { packed.keys }
        public var count: Int { keys.count }
        public var isEmpty: Bool { packed.isEmpty }

        /// Every property, decoded.
        public var dictionary: [String: DBusValue] { packed.dictionary }

        /// The properties, decoded, in no particular order (as a dictionary's).
        public func makeIterator() -> Dictionary<String, DBusValue>.Iterator { dictionary.makeIterator() }

        /// The same names with the same values (in any order).
        public static func == (lhs: Properties, rhs: Properties) -> Bool {
            lhs.packed.bytes == rhs.packed.bytes || lhs.dictionary == rhs.dictionary
        }

        public var description: String { dictionary.description }

        /// PropertiesChanged's fold: `changed` replaces or adds, then `invalidated` removes.
        mutating func fold(_ changed: Properties, invalidated: [String]) {
            packed.merge(changed.packed, invalidated: invalidated)
        }
    }
}
