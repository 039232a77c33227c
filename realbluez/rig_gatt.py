"""The GATT toolbox's shared checks: error objects, the records of read, write, request and info, the peripheral's counters, a link another client holds."""
import base64
import json
import subprocess
import threading
import time

import ctl
import rig
from rig import *  # noqa: F401,F403


ERROR_KEYS = ["code", "exit_status", "retryable", "message", "operation", "address", "service", "characteristic", "dbus_error"]


INFO_KEYS = ["address", "address_type", "name", "alias", "paired", "bonded", "trusted", "blocked", "connected",
             "services_resolved", "rssi", "tx_power", "appearance", "icon", "class", "modalias", "uuids",
             "manufacturer_data", "service_data", "decoded", "battery_percentage", "adapter"]


# Device1.UUIDs once bluetoothd has resolved the services (1800 is there although the gap
# plugin claims the GAP service, so that no GattService1 is exported for it).
RESOLVED_UUIDS = ["1800", "1801", "180a", "180f", VENDOR_SERVICE]


# After dbus_error, in a `disconnected` error where bluetoothd sent Device1.Disconnected
# (5.83 and later): its reason and message.
DISCONNECT_KEYS = ["disconnect_reason", "disconnect_message"]


def error_of(r, disconnect_reason=False):
    """The one JSON error object blectl wrote on stderr, with its keys in order checked
    (`disconnect_reason`: the error carries bluetoothd's Disconnected reason and message)."""
    lines = [line for line in r.err.splitlines() if line.strip()]
    eq(len(lines), 1, f"stderr lines of {r}")
    err = json.loads(lines[0])["error"]
    eq(list(err), ERROR_KEYS + (DISCONNECT_KEYS if disconnect_reason else []), f"error keys ({r})")
    return err


# The codes whose failures are retryable (man page, NOTES, Retries), except during a write or
# the wait for its response.
RETRYABLE_CODES = {"busy", "disconnected", "device_not_found", "connection_aborted"}


def retryable(code, operation):
    return code in RETRYABLE_CODES and operation not in ("write", "response")


def expect_error(r, rc, code, message, operation=None, service=None, characteristic=None, dbus_error=None,
                 address=PERIPHERAL):
    expect_rc(r, rc)
    eq(r.out, "", f"stdout of a failed {r.argv[0]}")
    eq(error_of(r), {"code": code, "exit_status": rc, "retryable": retryable(code, operation), "message": message, "operation": operation, "address": address,
                     "service": service, "characteristic": characteristic, "dbus_error": dbus_error},
       f"error object ({r})")


def expect_ok(r):
    expect_rc(r, 0)
    eq(r.err, "", f"stderr of {' '.join(r.argv)}")


def read_record(characteristic, service, value, text, descriptor=None, decoded=None):
    return {"address": PERIPHERAL, "service": service, "characteristic": characteristic, "descriptor": descriptor,
            "value": value, "text": text, "decoded": decoded}


def decoded_one(name, field, value, unit=None):
    """`decoded` of a characteristic of one field (man page OUTPUT, read)."""
    return {"name": name, "fields": [{"name": field, "value": value, "unit": unit}]}


def peripheral_counters():
    """bumble's own count of what blesim Real received (peripheral.py, `state`):
    -> (vendor commands [hex, ...] in order, pairings completed)."""
    check(rig.args.ctl, "--ctl needed for the peripheral's counters")
    status, out = ctl.command(rig.args.ctl, "bumble-state", timeout=30)
    eq(status, 0, f"bumble-state: {out}")
    line = next((l for l in out.splitlines() if l.startswith("blesim Real received:")), None)
    check(line is not None, f"counters in bumble-state: {out}")
    fields = dict(part.strip().split(" ", 1) for part in line[len("blesim Real received:"):].split(";"))
    commands = fields["commands"].split()[1:]  # "N a b c"
    eq(len(commands), int(fields["commands"].split()[0]), f"command count in {line!r}")
    return commands, int(fields["pairings"])


def claimed_writes():
    """What reached blesim Real's writable characteristic in 0x180A (CLAIMED_WRITE), in
    order, since the start (`state`): [hex, ...]."""
    check(rig.args.ctl, "--ctl needed for the peripheral's counters")
    status, out = ctl.command(rig.args.ctl, "bumble-state", timeout=30)
    eq(status, 0, f"bumble-state: {out}")
    line = next((l for l in out.splitlines() if l.startswith("blesim Real claimed-service writes:")), None)
    check(line is not None, f"claimed-service writes in bumble-state: {out}")
    fields = line.split(":", 1)[1].split()
    eq(len(fields) - 1, int(fields[0]), f"count in {line!r}")
    return fields[1:]


def known(address=PERIPHERAL):
    return dbus.ObjectPath(device_path(address)) in managed_objects()


def remove_device(address=PERIPHERAL):
    """Adapter1.RemoveDevice from this script (pairing, keys and the GATT cache go with it)."""
    if not known(address):
        return False
    b = bus()
    try:
        adapter = dbus.Interface(b.get_object("org.bluez", "/org/bluez/hci0"), "org.bluez.Adapter1")
        adapter.RemoveDevice(dbus.ObjectPath(device_path(address)), timeout=15)
    finally:
        b.close()
    wait_until(lambda: not known(address), 5.0, f"{address} gone after RemoveDevice")
    return True


class HeldLink:
    """A link another client holds: Device1.Connect called by this script (as bluetoothctl
    connect would), waited for until ServicesResolved and, with the battery plugin, Battery1
    (which the plugin registers after reading 0x2A19, right before it subscribes to it).
    On exit, Device1.Disconnect if the link is still up."""

    def __init__(self, battery1=True):
        self.battery1 = battery1

    def __enter__(self):
        if not known():
            host_sees_peripheral()
            wait_until(lambda: not bool(adapter_props()["Discovering"]), 5.0, "Discovering false after the check scan")
        b = bus()
        try:
            device = dbus.Interface(b.get_object("org.bluez", device_path(PERIPHERAL)), "org.bluez.Device1")
            t = time.monotonic()
            device.Connect(timeout=30)
            self.connect_s = time.monotonic() - t
        finally:
            b.close()
        wait_until(lambda: bool(device_prop(PERIPHERAL, "ServicesResolved")), 20.0, "ServicesResolved (held link)")
        if self.battery1:
            wait_until(lambda: "org.bluez.Battery1" in managed_objects().get(dbus.ObjectPath(device_path(PERIPHERAL)), {}),
                       5.0, "Battery1 (held link)")
            time.sleep(1.0)  # the battery plugin's CCC write follows Battery1
        return self

    def __exit__(self, *exc):
        try:
            if known() and bool(device_prop(PERIPHERAL, "Connected")):
                b = bus()
                try:
                    dbus.Interface(b.get_object("org.bluez", device_path(PERIPHERAL)),
                                   "org.bluez.Device1").Disconnect(timeout=15)
                finally:
                    b.close()
        except dbus.DBusException as e:
            note(f"held link: Disconnect on exit: {e}")
        return False


def connected_now():
    return known() and bool(device_prop(PERIPHERAL, "Connected"))


def info_record(**changes):
    """blesim Real as info prints it when BlueZ knows it from advertisements only."""
    record = {"address": PERIPHERAL, "address_type": "random", "name": "blesim Real", "alias": "blesim Real",
              "paired": False, "bonded": False, "trusted": False, "blocked": False, "connected": False,
              "services_resolved": False, "rssi": None, "tx_power": None, "appearance": None, "icon": None,
              "class": None, "modalias": None, "uuids": ["180f", "180a"], "manufacturer_data": {"05f1": "0102"},
              "service_data": {}, "decoded": {}, "battery_percentage": None, "adapter": "hci0"}
    record.update(changes)
    return record


def write_record(length, kind):
    return {"address": PERIPHERAL, "service": VENDOR_SERVICE, "characteristic": VENDOR_WRITE, "length": length, "type": kind}


def request_argv(value, *rest):
    return ["request", PERIPHERAL, value, "--write", VENDOR_WRITE, "--notify", VENDOR_NOTIFY, "--timeout", "30", *rest]
