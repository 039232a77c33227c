/// Names from the Bluetooth SIG's assigned numbers: 16-bit UUIDs, company identifiers and
/// appearance values.
///
/// Source: the SIG's assigned_numbers repository (YAML: uuids/service_uuids.yaml,
/// characteristic_uuids.yaml, descriptors.yaml, member_uuids.yaml;
/// company_identifiers/company_identifiers.yaml; core/appearance_values.yaml), turned into
/// the tables of `AssignedNumbers+Tables.swift` by `scripts/gen-assigned-numbers` (never
/// edited by hand; README, "Assigned numbers"). Names are the SIG's current ones
/// ("Battery" for 0x180F, "GATT" for 0x1801). Vendor 128-bit UUIDs have no name here.
///
/// Every look-up is a binary search in a sorted table built on first use (not at start-up),
/// O(log n), and makes one `String` of the name.
public enum AssignedNumbers {
    /// The SIG name of `uuid`, or `nil` if it is not a 16-bit UUID on the Bluetooth Base
    /// UUID or the SIG has not assigned it.
    ///
    /// Covers GATT services, characteristics and descriptors, and the 16-bit UUIDs the SIG
    /// assigns to its members (0xFCxx–0xFExx, named after the member).
    /// - Parameter uuid: for example `BluetoothUUID.batteryLevel`.
    /// - Returns: for example `"Battery Level"`.
    public static func name(for uuid: BluetoothUUID) -> String? {
        guard let uuid16 = uuid.uuid16 else { return nil }
        return uuid16Names.name(for: uuid16)
    }

    /// The name of the company a Bluetooth company identifier is assigned to (the identifier
    /// that starts manufacturer-specific data, Device1.ManufacturerData's key), or `nil` if
    /// the SIG has not assigned it.
    /// - Parameter identifier: for example `0x004C`.
    /// - Returns: for example `"Apple, Inc."`.
    public static func companyName(for identifier: UInt16) -> String? {
        companyNames.name(for: identifier)
    }

    /// The Bluetooth Core Specification version an HCI version number stands for
    /// (Adapter1.Version; the SIG's assigned numbers, core/core_version.yaml), or `nil` for a
    /// number it has not assigned.
    /// - Parameter hciVersion: for example `0x0B`.
    /// - Returns: for example `"5.2"`.
    public static func coreVersionName(for hciVersion: Int) -> String? {
        let names = ["1.0b", "1.1", "1.2", "2.0+EDR", "2.1+EDR", "3.0+HS", "4.0", "4.1", "4.2",
                     "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.1"]
        return names.indices.contains(hciVersion) ? names[hciVersion] : nil
    }

    /// The names of an appearance value (Device1.Appearance, the GAP Appearance
    /// characteristic 0x2A01): its category (bits 15–6) and subcategory (bits 5–0).
    /// - Parameter value: for example `0x03C1` (category 0x00F, subcategory 0x01).
    /// - Returns: for example `("Human Interface Device", "Keyboard")`; `category` is nil
    ///   for a category the SIG has not assigned; `subcategory` is nil for subcategory 0
    ///   (the generic one, which the SIG does not name) and for unassigned ones.
    public static func appearanceNames(for value: UInt16) -> (category: String?, subcategory: String?) {
        let category = appearanceCategoryNames.name(for: value >> 6)
        let subcategory = value & 0x3F == 0 || category == nil ? nil : appearanceSubcategoryNames.name(for: value)
        return (category, subcategory)
    }
}

/// A generated table of names: `keys` sorted ascending; name `i` is the UTF-8 bytes of
/// `names` from `offsets[i]` up to `offsets[i + 1] - 1` (names are separated by one newline).
struct NameTable: Sendable {
    let keys: [UInt16]
    let offsets: [UInt32]
    let names: StaticString

    /// The number of names.
    var count: Int { keys.count }

    /// The name for `key`, or nil.
    func name(for key: UInt16) -> String? {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        guard low < keys.count, keys[low] == key else { return nil }
        let start = Int(offsets[low])
        let end = Int(offsets[low + 1]) - 1
        return names.withUTF8Buffer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
    }
}
