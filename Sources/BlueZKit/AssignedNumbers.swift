/// Human-readable names for common 16-bit GATT UUIDs.
///
/// Source: Bluetooth SIG Assigned Numbers (GATT services, characteristics and
/// descriptors), cross-checked against BlueZ's `uuid16_table` (src/shared/util.c).
/// The names are the SIG's long forms ("Battery Service", "Generic Access",
/// "Firmware Revision String"). Only a selection of common UUIDs is listed; vendor and
/// member UUIDs (0xFDxx–0xFExx) are not.
public enum AssignedNumbers {
    /// The SIG name of `uuid`, or `nil` if it is not a 16-bit UUID on the Bluetooth Base
    /// UUID or is not in the table. One dictionary look-up, O(1).
    ///
    /// - Parameter uuid: for example `BluetoothUUID.batteryLevel`.
    /// - Returns: for example `"Battery Level"`.
    public static func name(for uuid: BluetoothUUID) -> String? {
        guard let uuid16 = uuid.uuid16 else { return nil }
        return names[uuid16]
    }

    /// 16-bit UUID → SIG name.
    static let names: [UInt16: String] = [
        // Services
        0x1800: "Generic Access",
        0x1801: "Generic Attribute",
        0x1802: "Immediate Alert",
        0x1803: "Link Loss",
        0x1804: "Tx Power",
        0x1805: "Current Time",
        0x1809: "Health Thermometer",
        0x180A: "Device Information",
        0x180D: "Heart Rate",
        0x180F: "Battery Service",
        0x1810: "Blood Pressure",
        0x1812: "Human Interface Device",
        0x1813: "Scan Parameters",
        0x1816: "Cycling Speed and Cadence",
        0x1818: "Cycling Power",
        0x181A: "Environmental Sensing",
        0x181C: "User Data",
        0x181D: "Weight Scale",
        0x1826: "Fitness Machine",

        // Characteristics
        0x2A00: "Device Name",
        0x2A01: "Appearance",
        0x2A04: "Peripheral Preferred Connection Parameters",
        0x2A05: "Service Changed",
        0x2A06: "Alert Level",
        0x2A07: "Tx Power Level",
        0x2A19: "Battery Level",
        0x2A23: "System ID",
        0x2A24: "Model Number String",
        0x2A25: "Serial Number String",
        0x2A26: "Firmware Revision String",
        0x2A27: "Hardware Revision String",
        0x2A28: "Software Revision String",
        0x2A29: "Manufacturer Name String",
        0x2A2B: "Current Time",
        0x2A37: "Heart Rate Measurement",
        0x2A38: "Body Sensor Location",
        0x2A39: "Heart Rate Control Point",
        0x2A4A: "HID Information",
        0x2A4B: "Report Map",
        0x2A4C: "HID Control Point",
        0x2A4D: "Report",
        0x2A4E: "Protocol Mode",
        0x2A50: "PnP ID",
        0x2A6E: "Temperature",
        0x2A6F: "Humidity",
        0x2AA6: "Central Address Resolution",
        0x2B29: "Client Supported Features",
        0x2B2A: "Database Hash",

        // Descriptors
        0x2900: "Characteristic Extended Properties",
        0x2901: "Characteristic User Description",
        0x2902: "Client Characteristic Configuration",
        0x2903: "Server Characteristic Configuration",
        0x2904: "Characteristic Presentation Format",
        0x2908: "Report Reference",
    ]
}
