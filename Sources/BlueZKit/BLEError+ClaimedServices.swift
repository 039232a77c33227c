import DBusKit

/// Writes bluetoothd refuses by itself: services its own plugins claim, exported read-only.
///
/// bluetoothd marks a device's GATT service "claimed" when one of its internal profiles
/// takes it (bluez/src/device.c add_gatt_service). From 5.80, main.conf's `[GATT]
/// ExportClaimedServices` (`no`, `read-only` or `read-write`; default `read-only`, src/main.c)
/// exports those services, and with `read-only` refuses every write into them before
/// anything is sent to the device (src/gatt-client.c characteristic_write_value,
/// characteristic_acquire_write, descriptor_write_value): `org.bluez.Error.NotAuthorized`
/// "Operation Not Authorized". The device's own refusal for want of authorization (ATT
/// Insufficient Authorization, create_gatt_dbus_error) has the same name and message, and
/// nothing on the bus tells a claimed service from another, so the rule is: a
/// NotAuthorized write into a service one of bluetoothd's profiles claims
/// (``pluginClaimedServices``) is ``BLEError/serviceReadOnly(_:dbusError:message:)``, unless
/// bluetoothd is known to be older than 5.80 (``Session/bluezVersion``, from its Device ID),
/// where it is the device's refusal (``BLEError/notPermitted(_:dbusError:message:)``).
extension BLEError {
    /// The GATT services bluetoothd 5.80's internal profiles claim (the `remote_uuid` of
    /// the GATT profiles under bluez/profiles/): gap 0x1800 (Generic Access), deviceinfo
    /// 0x180A (Device Information), battery 0x180F (Battery), input's HoG 0x1812 (Human
    /// Interface Device), scanparam 0x1813 (Scan Parameters), and the LE Audio ones: vcp
    /// 0x1844, csip 0x1846, mcp 0x1849, ccp 0x184C, micp 0x184D, bass 0x184F, bap 0x1850,
    /// asha 0xFDF0.
    public static let pluginClaimedServices: Set<BluetoothUUID> = Set(
        [0x1800, 0x180A, 0x180F, 0x1812, 0x1813, 0x1844, 0x1846, 0x1849, 0x184C, 0x184D, 0x184F, 0x1850, 0xFDF0]
            .map { BluetoothUUID(uuid16: $0) })

    /// The first bluetoothd that exports claimed services read-only.
    public static let readOnlyClaimedServicesSince = BlueZVersion(major: 5, minor: 80)

    /// This error as bluetoothd `version` (nil: unknown) meant it: a ``notPermitted(_:dbusError:message:)``
    /// NotAuthorized answered to a write into one of ``pluginClaimedServices`` is
    /// ``serviceReadOnly(_:dbusError:message:)`` unless `version` is older than 5.80; any
    /// other error is returned as it is.
    public func explainingClaimedService(bluez version: BlueZVersion?) -> BLEError {
        guard case .notPermitted(let operation, BlueZ.Error.notAuthorized, let message) = self, operation.kind == .write,
              let service = operation.service, Self.pluginClaimedServices.contains(service),
              version.map({ $0 >= Self.readOnlyClaimedServicesSince }) ?? true else { return self }
        return .serviceReadOnly(operation, dbusError: BlueZ.Error.notAuthorized, message: message)
    }
}

/// A bluetoothd version, `5.82`.
public struct BlueZVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// The version in BlueZ's own Device ID modalias, `usb:v1D6Bp0246d0552` (vendor 0x1D6B,
    /// the Linux Foundation; product 0x0246, BlueZ; version major << 8 | minor; bluez
    /// src/main.c, the default of main.conf's `DeviceID`); nil for any other modalias (a
    /// `DeviceID` set in main.conf).
    public init?(modalias: String) {
        let text = modalias.lowercased()
        guard text.hasPrefix("usb:v1d6bp0246d"), text.count == 19,
              let version = UInt16(text.dropFirst(15), radix: 16) else { return nil }
        self.init(major: Int(version >> 8), minor: Int(version & 0xff))
    }

    public static func < (a: BlueZVersion, b: BlueZVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }

    public var description: String { "\(major).\(minor)" }
}

extension Session {
    /// bluetoothd's version as its adapters' Adapter1.Modalias tells it (``BlueZVersion/init(modalias:)``),
    /// nil when none does.
    public var bluezVersion: BlueZVersion? {
        withCache { cache in
            cache.paths(with: BlueZ.adapterInterface).lazy
                .compactMap { cache.property("Modalias", of: $0, on: BlueZ.adapterInterface)?.string }
                .compactMap(BlueZVersion.init(modalias:)).first
        }
    }
}
