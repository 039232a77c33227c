import BlueZKit

/// What `blectl serve` serves, read from a JSON profile (profiles/blectl-profile.schema.json):
/// the GATT application, the name to advertise, the characteristics notified on a schedule,
/// and what was left out because bluetoothd provides it itself. `connect --values` prints
/// such a profile: its informative members (the device's address, the SIG's names, why a
/// value could not be read) are accepted and ignored.
struct ServeProfile: Sendable {
    /// A characteristic notified every `interval` while a central is subscribed, its
    /// `values` in turn (none: its value as it is).
    struct Schedule: Sendable {
        var service: Int
        var characteristic: Int
        var interval: Duration
        var values: [[UInt8]]
    }

    /// A service or descriptor of the profile not served (bluetoothd serves its own), or an
    /// attribute `connect --values` could not read (served with an empty value): where it is.
    struct Skipped: Sendable, Equatable {
        var line: Int
        /// Its place: `services[1].characteristics[0].descriptors[0]`.
        var field: String
        var uuid: BluetoothUUID
        var reason: String
    }

    /// A profile that cannot be served, at a line and member: `line 12:
    /// services[0].characteristics[1].flags: unknown flag "shout"`. Exit status 65.
    struct Invalid: CommandError, Equatable {
        var source: String
        var line: Int
        /// Where in the profile: `services[0].characteristics[1].flags`; empty for the whole.
        var field: String
        var message: String
        /// 65, or 124 for a profile not read whole in time.
        var status: ExitStatus = .invalidProfile
        var description: String {
            "\(source) line \(line): " + (field.isEmpty ? "" : "\(field): ") + message
        }
    }

    var name: String?
    /// The line of `name` (1 when absent).
    var nameLine = 1
    var application: GATTApplication
    var schedules: [Schedule]
    var skipped: [Skipped]
    /// The attributes whose `value_error` says `connect --values` could not read them.
    var unread: [Skipped]

    /// The members `connect` prints that `serve` ignores, by level.
    static let informative: [String: Set<String>] = [
        "profile": ["address", "address_type", "adapter", "was_connected"],
        "service": ["name"], "characteristic": ["name", "value_error"], "descriptor": ["name", "value_error"],
    ]

    /// Reads a profile from `text`; `source` names it in errors (a path, or "standard input").
    static func parse(_ text: String, source: String) throws(Invalid) -> ServeProfile {
        let root: JSONDocument.Node
        // A byte order mark some editors write first is not JSON (RFC 8259 8.1), and means nothing in UTF-8.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        do { root = try JSONDocument.parse(text) } catch {
            throw Invalid(source: source, line: error.line, field: "", message: error.message)
        }
        var reader = Reader(source: source)
        return try reader.profile(root)
    }

    /// The walk through the document, collecting what it reads.
    private struct Reader {
        let source: String
        var schedules: [Schedule] = []
        var skipped: [Skipped] = []
        var unread: [Skipped] = []

        func invalid(_ node: JSONDocument.Node, _ field: String, _ message: String) -> Invalid {
            Invalid(source: source, line: node.line, field: field, message: message)
        }

        /// The members of an object, each known at `level` (or informative there).
        func members(_ node: JSONDocument.Node, _ field: String, level: String, known: Set<String>) throws(Invalid) -> [(key: String, node: JSONDocument.Node)] {
            guard case .object(let members) = node.value else {
                throw invalid(node, field, "expected an object, not \(node.kind)")
            }
            let allowed = known.union(ServeProfile.informative[level] ?? [])
            if let unknown = members.first(where: { !allowed.contains($0.key) }) {
                throw invalid(unknown.node, join(field, unknown.key),
                              "unknown member; a \(level) has \(known.sorted().map { "\"\($0)\"" }.joined(separator: ", "))")
            }
            return members
        }

        func array(_ node: JSONDocument.Node, _ field: String) throws(Invalid) -> [JSONDocument.Node] {
            guard case .array(let items) = node.value else { throw invalid(node, field, "expected an array, not \(node.kind)") }
            return items
        }

        func uuid(_ node: JSONDocument.Node?, _ field: String, in parent: JSONDocument.Node) throws(Invalid) -> BluetoothUUID {
            guard let node else { throw invalid(parent, field, "missing: a UUID such as 180f is needed") }
            guard case .string(let text) = node.value, let uuid = BluetoothUUID(text) else {
                throw invalid(node, field, "expected a UUID (180f, 0000180f or 128-bit), not \(Self.shown(node))")
            }
            return uuid
        }

        /// A hex string (null: empty), at most 512 bytes.
        func bytes(_ node: JSONDocument.Node?, _ field: String) throws(Invalid) -> [UInt8] {
            guard let node else { return [] }
            if case .null = node.value { return [] }
            guard case .string(let text) = node.value, let bytes = [UInt8](hexDigits: text) else {
                throw invalid(node, field, "expected bytes in hex, two digits each (\"0a1b\"), not \(Self.shown(node))")
            }
            guard bytes.count <= GATTApplication.maximumValueLength else {
                throw invalid(node, field, "\(bytes.count) bytes: a value holds at most \(GATTApplication.maximumValueLength)")
            }
            return bytes
        }

        func flags(_ node: JSONDocument.Node?, _ field: String, allowed: Set<String>) throws(Invalid) -> [String]? {
            guard let node else { return nil }
            var flags: [String] = []
            for (i, item) in try array(node, field).enumerated() {
                guard case .string(let flag) = item.value else { throw invalid(item, "\(field)[\(i)]", "expected a flag name, not \(item.kind)") }
                guard allowed.contains(flag) else {
                    throw invalid(item, "\(field)[\(i)]", "unknown flag \"\(Records.printable(flag))\"; BlueZ's are \(allowed.sorted().joined(separator: ", "))")
                }
                guard !flags.contains(flag) else { throw invalid(item, "\(field)[\(i)]", "flag \"\(flag)\" given twice") }
                flags.append(flag)
            }
            guard !flags.isEmpty else { throw invalid(node, field, "no flags: at least one is needed") }
            return flags
        }

        mutating func profile(_ root: JSONDocument.Node) throws(Invalid) -> ServeProfile {
            let members = try self.members(root, "", level: "profile", known: ["name", "services"])
            var name: String?
            if let node = root["name"] {
                switch node.value {
                case .null: break
                case .string(let text) where !text.isEmpty: name = text
                default: throw invalid(node, "name", "expected a non-empty string or null, not \(Self.shown(node))")
                }
            }
            guard let servicesNode = members.first(where: { $0.key == "services" })?.node else {
                throw invalid(root, "services", "missing: a profile has an array of services")
            }
            var services: [GATTApplication.Service] = []
            for (i, node) in try array(servicesNode, "services").enumerated() {
                if let service = try service(node, "services[\(i)]", index: services.count) { services.append(service) }
            }
            guard !services.isEmpty else {
                throw invalid(servicesNode, "services", "no service to serve (bluetoothd serves 1800 and 1801 itself)")
            }
            let handles = services.reduce(0) { $0 + Self.handles(of: $1) }
            guard handles <= Self.freeHandles else {
                throw invalid(servicesNode, "services", "\(handles) attribute handles: bluetoothd has \(Self.freeHandles) left for applications")
            }
            return ServeProfile(name: name, nameLine: root["name"]?.line ?? 1, application: GATTApplication(services: services),
                                schedules: schedules, skipped: skipped, unread: unread)
        }

        mutating func service(_ node: JSONDocument.Node, _ field: String, index: Int) throws(Invalid) -> GATTApplication.Service? {
            _ = try members(node, field, level: "service", known: ["uuid", "primary", "characteristics"])
            let uuid = try self.uuid(node["uuid"], join(field, "uuid"), in: node)
            var primary = true
            if let p = node["primary"] {
                guard case .bool(let value) = p.value else { throw invalid(p, join(field, "primary"), "expected true or false, not \(Self.shown(p))") }
                primary = value
            }
            if GATTApplication.reservedServices.contains(uuid) {
                skipped.append(Skipped(line: node.line, field: field, uuid: uuid, reason: "bluetoothd serves \(uuid.shortString) itself"))
                return nil
            }
            var characteristics: [GATTApplication.Characteristic] = []
            if let list = node["characteristics"] {
                for (i, item) in try array(list, join(field, "characteristics")).enumerated() {
                    characteristics.append(try characteristic(item, join(field, "characteristics") + "[\(i)]", service: index, index: i))
                }
            }
            return GATTApplication.Service(uuid: uuid, primary: primary, characteristics: characteristics)
        }

        mutating func characteristic(_ node: JSONDocument.Node, _ field: String, service: Int, index: Int) throws(Invalid) -> GATTApplication.Characteristic {
            _ = try members(node, field, level: "characteristic", known: ["uuid", "flags", "value", "notify_every", "values", "descriptors"])
            let uuid = try self.uuid(node["uuid"], join(field, "uuid"), in: node)
            guard let flags = try flags(node["flags"], join(field, "flags"), allowed: GATTApplication.characteristicFlags) else {
                throw invalid(node, join(field, "flags"), "missing: a characteristic needs its flags, such as [\"read\", \"notify\"]")
            }
            var characteristic = GATTApplication.Characteristic(uuid: uuid, flags: flags, value: try bytes(node["value"], join(field, "value")))
            noteUnread(node, field, uuid: uuid)
            try schedule(node, field, characteristic: characteristic, service: service, index: index)
            if let list = node["descriptors"] {
                for (i, item) in try array(list, join(field, "descriptors")).enumerated() {
                    if let descriptor = try descriptor(item, join(field, "descriptors") + "[\(i)]") { characteristic.descriptors.append(descriptor) }
                }
            }
            return characteristic
        }

        /// `notify_every` and `values`, checked against the characteristic's flags.
        mutating func schedule(_ node: JSONDocument.Node, _ field: String, characteristic: GATTApplication.Characteristic,
                               service: Int, index: Int) throws(Invalid) {
            let valuesNode = node["values"]
            guard let every = node["notify_every"] else {
                if let valuesNode { throw invalid(valuesNode, join(field, "values"), "values are sent in turn only with notify_every") }
                return
            }
            guard case .number(let seconds) = every.value, seconds >= 0.01, seconds <= 86_400 else {
                throw invalid(every, join(field, "notify_every"), "expected seconds, from 0.01 to 86400, not \(Self.shown(every))")
            }
            guard characteristic.canNotify else {
                throw invalid(every, join(field, "notify_every"), "the characteristic neither notifies nor indicates (its flags)")
            }
            var values: [[UInt8]] = []
            if let valuesNode {
                for (i, item) in try array(valuesNode, join(field, "values")).enumerated() {
                    values.append(try bytes(item, join(field, "values") + "[\(i)]"))
                }
                guard !values.isEmpty else { throw invalid(valuesNode, join(field, "values"), "empty: give at least one value, or leave it out") }
            }
            schedules.append(Schedule(service: service, characteristic: index, interval: .milliseconds(Int64((seconds * 1000).rounded())),
                                      values: values))
        }

        mutating func descriptor(_ node: JSONDocument.Node, _ field: String) throws(Invalid) -> GATTApplication.Descriptor? {
            _ = try members(node, field, level: "descriptor", known: ["uuid", "flags", "value"])
            let uuid = try self.uuid(node["uuid"], join(field, "uuid"), in: node)
            let flags = try flags(node["flags"], join(field, "flags"), allowed: GATTApplication.descriptorFlags) ?? ["read"]
            let value = try bytes(node["value"], join(field, "value"))
            if GATTApplication.reservedDescriptors.contains(uuid) {
                skipped.append(Skipped(line: node.line, field: field, uuid: uuid, reason: "bluetoothd makes \(uuid.shortString) itself"))
                return nil
            }
            noteUnread(node, field, uuid: uuid)
            return GATTApplication.Descriptor(uuid: uuid, flags: flags, value: value)
        }

        /// Records an attribute whose `value_error` (from `connect --values`) says it was not read.
        mutating func noteUnread(_ node: JSONDocument.Node, _ field: String, uuid: BluetoothUUID) {
            if case .string(let error)? = node["value_error"]?.value {
                unread.append(Skipped(line: node.line, field: field, uuid: uuid, reason: error))
            }
        }

        /// The 16-bit handles after bluetoothd's own (GAP, GATT, Device Information: 1 to 20).
        static let freeHandles = 0xFFFF - 20

        /// The handles a service takes in bluetoothd's database (src/gatt-database.c): its
        /// declaration, 2 a characteristic (+1 for a CCC, +1 for extended properties), 1 a descriptor.
        static func handles(of service: GATTApplication.Service) -> Int {
            1 + service.characteristics.reduce(0) { count, characteristic in
                let extended = characteristic.flags.contains("reliable-write") || characteristic.flags.contains("writable-auxiliaries")
                return count + 2 + (characteristic.canNotify ? 1 : 0) + (extended ? 1 : 0) + characteristic.descriptors.count
            }
        }

        func join(_ field: String, _ key: String) -> String { field.isEmpty ? key : "\(field).\(key)" }

        /// The value as a message shows it: a string quoted (cut at 40 characters), else its kind.
        static func shown(_ node: JSONDocument.Node) -> String {
            switch node.value {
            case .string(let text): "\"" + Records.printable(text.count > 40 ? String(text.prefix(40)) + "…" : text) + "\""
            case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            default: node.kind
            }
        }
    }
}
