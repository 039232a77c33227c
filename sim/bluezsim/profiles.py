"""What differs between the bluetoothd versions the simulator models (versions.py), read in
BlueZ's sources at each tag (src/adapter.c, src/device.c, src/gatt-client.c, src/battery.c)
and checked against real bluetoothd in realbluez/ (realbluez/trees/<version>.json).

The Sim mixes these in; each component asks here rather than comparing versions itself.
"""

# Behaviours of a version that the simulator also offers as faults: a profile turns them on
# at start-up unless the faults given say otherwise (--set NAME=false).
PROFILE_FAULTS = {
    (5, 66): {},
    # de8e7cfce (5.67): a filter of only Transport (the scan type) and DuplicateData false
    # makes a regular discovery.
    (5, 82): {"empty_filter_is_regular": True},
    # 91c340d35 (5.87, bluez#2282): a discovery filter with UUIDs crashes bluetoothd.
    (5, 87): {"empty_filter_is_regular": True, "uuid_filter_crash": True},
}

# Adapter1.Modalias: "usb:v1D6Bp0246dXXXX", the Linux Foundation's vendor id, BlueZ's product
# id and the version, major << 8 | minor (src/main.c, btd_opts.did_version): 5.66 -> 0542,
# 5.82 -> 0552, 5.87 -> 0557.
def modalias(version):
    major, minor = version
    return f"usb:v1D6Bp0246d{(major << 8) | minor:04X}"


# The controllers the simulated adapters stand for, as 5.82 and later export them
# (Manufacturer: company identifier; Version: HCI version, 0x0B = Core 5.2, 0x06 = 4.0):
# hci0 an Intel one, hci1 a CSR dongle (its Modalias is the CSR USB id).
HCI0_CONTROLLER = (0x0002, 0x0B)
HCI1_CONTROLLER = (0x000A, 0x06)

# Adapter1.ExperimentalFeatures exists only when the kernel reports experimental features
# enabled (src/adapter.c property_experimental_exists): none of the rigs' kernels did (6.1,
# 6.12, 7.2), so no simulated version has it.


class VersionSurface:
    """Mixed into Sim: which properties and objects the modelled bluetoothd exports."""

    def experimental(self):
        """bluetoothd runs with --experimental (-E)."""
        return bool(self.faults.get("experimental"))

    def adapter_has_power_state(self):
        """Adapter1.PowerState: experimental up to 5.72, always there from 5.73 (d3aeae79d)."""
        return self.bluez_at_least("5.73") or self.experimental()

    def adapter_extra_properties(self, controller, connectable):
        """Adapter1 properties 5.82 has and 5.66 does not (Manufacturer and Version from
        5.71, Connectable from 5.79), as {name: [signature, value]}; `controller`: (company
        identifier, HCI version)."""
        if not self.bluez_at_least("5.82"):
            return {}
        manufacturer, version = controller
        return {"Connectable": ["b", connectable], "Manufacturer": ["q", manufacturer], "Version": ["y", version]}

    def device_extra_properties(self):
        """Device1 properties of later versions: CablePairing (5.83), as {name: [signature,
        value]}."""
        return {"CablePairing": ["b", False]} if self.bluez_at_least("5.83") else {}

    def bearer_interfaces(self, spec):
        """org.bluez.Bearer.LE1 / Bearer.BREDR1 on a device object (5.84, src/bearer.c): one
        per bearer the device has; their properties and methods are experimental, so
        without --experimental they are empty."""
        if not self.bluez_at_least("5.84"):
            return []
        bredr = spec.dual or spec.device_class is not None
        le = spec.dual or spec.device_class is None
        return (["org.bluez.Bearer.LE1"] if le else []) + (["org.bluez.Bearer.BREDR1"] if bredr else [])

    def advertising_flags_exported(self):
        """Device1.AdvertisingFlags: experimental in 5.66. (AdvertisingData, experimental
        too, exists only for AD types bluetoothd does not parse: no simulated device sends
        one.)"""
        return self.bluez_at_least("5.82") or self.experimental()

    def adv_capabilities_exported(self):
        """LEAdvertisingManager1.SupportedFeatures and SupportedCapabilities: experimental up
        to 5.76 (src/advertising.c), always there from 5.77."""
        return self.bluez_at_least("5.77") or self.experimental()

    def battery_source_exported(self):
        """Battery1.Source: experimental in 5.66."""
        return self.bluez_at_least("5.82") or self.experimental()

    def gatt_handles_exported(self):
        """GattService1/Characteristic1/Descriptor1.Handle on a client's objects (5.82)."""
        return self.bluez_at_least("5.82")

    def gap_service_exported(self):
        """Generic Access 0x1800: the gap plugin claims it; 5.66 hides it, 5.82 exports it
        (read-only, ExportClaimedServices)."""
        return self.bluez_at_least("5.82")

    def connectable_hidden_reported(self):
        """5.78 to 5.82 (939133293, undone by af7d5dc61 in 5.83) create a device heard in a
        regular discovery without the discoverable flags when it is connectable."""
        return self.bluez_at_least("5.78") and not self.bluez_at_least("5.83")
