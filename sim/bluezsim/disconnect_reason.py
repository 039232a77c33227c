"""Device1.Disconnected(reason, message), bluetoothd 5.83 and later: sent on the device's
object when its last link is gone, just before Connected becomes false (src/device.c
device_remove_connection -> device_disconnected; names and messages from there, reasons in
doc/org.bluez.Device.rst)."""

# The simulator's causes of a link going down -> the kernel's MGMT_DEV_DISCONN_* reason as
# bluetoothd names it.
REASONS = {
    "timeout": ("org.bluez.Reason.Timeout", "Connection timeout"),               # supervision timeout: DropLink
    "local": ("org.bluez.Reason.Local", "Connection terminated by local host"),  # Disconnect, bluetoothd stopping
    "power": ("org.bluez.Reason.Local", "Connection terminated by local host"),  # the adapter powered off
    "remote": ("org.bluez.Reason.Remote", "Connection terminated by remote user"),
}
UNKNOWN = ("org.bluez.Reason.Unknown", "Unspecified")


def signal_disconnected(device, cause):
    """Emits Disconnected on `device`'s object for a link gone down for `cause` (a key of
    REASONS), when the modelled bluetoothd is 5.83 or later."""
    if device.removed or not device.sim.bluez_at_least("5.83"):
        return
    name, message = REASONS.get(cause, UNKNOWN)
    device.sim.bus._signal(device.path, "org.bluez.Device1", "Disconnected", "ss", name, message)
