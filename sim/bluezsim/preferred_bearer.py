"""Device1.PreferredBearer (BlueZ 5.80 and later, experimental: only with bluetoothd
--experimental, fault "experimental"), on a dual-mode device only: the bearer Connect takes
(src/device.c device_prefer_bearer_str, dev_property_set_prefer_bearer, select_conn_bearer:
"le" or "bredr" decide before the last-seen times). Values: "last-seen" (5.82's default),
"le", "bredr"; 5.87 adds "last-used" (its default)."""

from .call import DBusError
from .ifaces import ERR


def offered(device):
    """Whether bluetoothd exports PreferredBearer on `device`: 5.80+, experimental, and a
    device known on both bearers (device_prefer_bearer_str: dev->bredr and dev->le). The
    dual-mode device counts as known over LE from start-up, as one bluetoothd stored
    earlier with both technologies."""
    sim = device.sim
    return bool(device.spec.dual and sim.bluez_at_least("5.80") and sim.faults.get("experimental"))


def initial(device):
    """The property's value at start-up, None when not offered."""
    if not offered(device):
        return None
    return "last-used" if device.sim.bluez_at_least("5.87") else "last-seen"


def values(device):
    return ("last-used", "le", "bredr", "last-seen") if device.sim.bluez_at_least("5.87") else ("le", "bredr", "last-seen")


def set_preferred_bearer(device, call, value):
    """Properties.Set of PreferredBearer: an accepted value is answered, stored and signalled
    (when it changed); anything else is InvalidArguments."""
    text = str(value)
    if text not in values(device):
        raise DBusError(ERR + "InvalidArguments", "Invalid arguments in method call")
    call.reply()
    if device.obj.get("org.bluez.Device1", "PreferredBearer") != text:
        device.set(PreferredBearer=text)


def preferred(device):
    """"le" or "bredr" when PreferredBearer decides Connect's bearer, else None."""
    if not offered(device):
        return None
    value = device.obj.get("org.bluez.Device1", "PreferredBearer")
    return value if value in ("le", "bredr") else None
