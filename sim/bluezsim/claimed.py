"""Services claimed by bluetoothd's own plugins, exported read-only from 5.80 on.

bluetoothd marks a remote GATT service "claimed" when one of its internal profiles probes it
(src/device.c add_gatt_service: the gap, deviceinfo and battery plugins claim 0x1800, 0x180A
and 0x180F). From 5.80, main.conf `[GATT] ExportClaimedServices` (no | read-only |
read-write, default read-only) exports them, and with read-only src/gatt-client.c refuses
every write into them before anything is sent to the device (characteristic_write_value,
characteristic_acquire_write, descriptor_write_value: btd_error_not_authorized,
org.bluez.Error.NotAuthorized "Operation Not Authorized"). 5.66 knows nothing of it: the
battery and Device Information services are exported as any other, and writable.
"""

from .call import DBusError
from .ifaces import ERR
from .world import u16

# The plugins the simulated bluetoothd runs: gap (profiles/gap/gas.c), deviceinfo
# (profiles/deviceinfo/deviceinfo.c), battery (profiles/battery/battery.c).
PLUGIN_CLAIMED = {u16(0x1800), u16(0x180A), u16(0x180F)}


def service_uuid_of(char):
    """The UUID of the service `char` (a characteristic.Char) belongs to."""
    svc_path = char.obj.ifaces["org.bluez.GattCharacteristic1"]["Service"][1]
    for so, _ in char.tree.services:
        if so.path == svc_path:
            return so.ifaces["org.bluez.GattService1"]["UUID"][1]
    return None


def refuse_write_if_claimed(char):
    """Raises NotAuthorized, as bluetoothd 5.80+ does, for a write (WriteValue, AcquireWrite,
    a descriptor's WriteValue) into a service one of its plugins claimed."""
    if char.sim.bluez_at_least("5.80") and service_uuid_of(char) in PLUGIN_CLAIMED:
        raise DBusError(ERR + "NotAuthorized", "Operation Not Authorized")
