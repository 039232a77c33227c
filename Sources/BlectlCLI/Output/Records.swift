import BlueZKit

/// The JSON and text forms of each result (field names documented in man/blectl.1).
enum Records {
    static func advertisement(_ a: Advertisement, adapter: String) -> JSONValue {
        .object([
            ("address", .string(a.address.description)),
            ("address_type", .optional(a.addressType)),
            ("name", .optional(a.name)),
            ("rssi", .optional(a.rssi)),
            ("tx_power", .optional(a.txPower)),
            ("uuids", .array(a.uuids.map { .string($0.shortString) })),
            ("manufacturer_data", .object(a.manufacturerData.sorted { $0.key < $1.key }.map { (hex4($0.key), .string($0.value.hexString)) })),
            ("service_data", .object(a.serviceData.sorted { $0.key.description < $1.key.description }.map { ($0.key.shortString, .string($0.value.hexString)) })),
            ("connected", .bool(a.connected)),
            ("adapter", .string(adapter)),
        ])
    }

    static func advertisementText(_ a: Advertisement) -> String {
        let rssi = a.rssi.map { "\($0) dBm" } ?? "-"
        let name = a.name.map { printable($0) } ?? "(no name)"
        let uuids = a.uuids.isEmpty ? "" : "  [" + a.uuids.map(\.shortString).joined(separator: ", ") + "]"
        return "\(a.address)  \(pad(a.addressType ?? "-", 6))  \(pad(rssi, 8))  \(name)\(uuids)"
    }

    static func gattTree(_ device: Device, advertisement: Advertisement?, origin: ConnectionOrigin, services: [GATTService]) -> JSONValue {
        .object([
            ("address", .string(device.address.description)),
            ("name", .optional(advertisement?.name)),
            ("address_type", .optional(advertisement?.addressType)),
            ("adapter", .string(device.adapter.name)),
            ("was_connected", .bool(origin == .alreadyConnected)),
            ("services", .array(services.map { service in
                .object([
                    ("uuid", .string(service.uuid.shortString)),
                    ("name", .optional(AssignedNumbers.name(for: service.uuid))),
                    ("primary", .bool(service.primary)),
                    ("characteristics", .array(service.characteristics.map { c in
                        .object([
                            ("uuid", .string(c.uuid.shortString)),
                            ("name", .optional(AssignedNumbers.name(for: c.uuid))),
                            ("flags", .array(c.flags.map { .string($0) })),
                            ("descriptors", .array(c.descriptors.map { d in
                                .object([("uuid", .string(d.uuid.shortString)), ("name", .optional(AssignedNumbers.name(for: d.uuid)))])
                            })),
                        ])
                    })),
                ])
            })),
        ])
    }

    static func gattTreeText(_ device: Device, advertisement: Advertisement?, services: [GATTService]) -> [String] {
        var lines = ["\(device.address)  \(advertisement?.name.map { printable($0) } ?? "(no name)")"]
        for service in services {
            lines.append("  service \(service.uuid.shortString)\(label(service.uuid))")
            for c in service.characteristics {
                lines.append("    characteristic \(c.uuid.shortString)\(label(c.uuid))  [\(c.flags.joined(separator: ", "))]")
                for d in c.descriptors { lines.append("      descriptor \(d.uuid.shortString)\(label(d.uuid))") }
            }
        }
        return lines
    }

    static func version(_ info: DeviceInformation, address: BluetoothAddress) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("source", .string(info.source.rawValue)),
            ("firmware_revision", .optional(info.firmwareRevision)),
            ("hardware_revision", .optional(info.hardwareRevision)),
            ("software_revision", .optional(info.softwareRevision)),
            ("manufacturer_name", .optional(info.manufacturerName)),
            ("model_number", .optional(info.modelNumber)),
        ])
    }

    static func versionText(_ info: DeviceInformation, address: BluetoothAddress) -> [String] {
        [("address", address.description), ("source", info.source.rawValue),
         ("firmware_revision", info.firmwareRevision), ("hardware_revision", info.hardwareRevision),
         ("software_revision", info.softwareRevision), ("manufacturer_name", info.manufacturerName),
         ("model_number", info.modelNumber)].map { "\($0.0): \($0.1.map { printable($0) } ?? "-")" }
    }

    static func battery(_ reading: BatteryReading, address: BluetoothAddress) -> JSONValue {
        .object([
            ("address", .string(address.description)),
            ("percentage", .int(reading.percentage)),
            ("source", .string(reading.source.rawValue)),
        ])
    }

    static func batteryText(_ reading: BatteryReading, address: BluetoothAddress) -> String {
        "\(address)  \(reading.percentage)%  (\(reading.source.rawValue))"
    }

    private static func label(_ uuid: BluetoothUUID) -> String {
        AssignedNumbers.name(for: uuid).map { " (\($0))" } ?? ""
    }

    private static func hex4(_ value: UInt16) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(value >> 12)], digits[Int(value >> 8 & 0xF)], digits[Int(value >> 4 & 0xF)], digits[Int(value & 0xF)]])
    }

    private static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    /// Control characters shown as `?` in text output, so a name cannot move the terminal.
    static func printable(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}
