"""The errors bluetoothd's GATT client answers a characteristic's methods with when the link
is down or the same request is already running (BlueZ 5.66 src/gatt-client.c)."""

from .call import DBusError
from .ifaces import ERR


def not_connected():
    return DBusError(ERR + "Failed", "Not connected")


def in_progress():
    return DBusError(ERR + "InProgress", "In Progress")
