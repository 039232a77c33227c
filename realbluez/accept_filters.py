"""Acceptance tests against a real bluetoothd: discovery filters that bluetoothd versions
treat differently. 5.87 crashes (segfault) when a discovery filter carries UUIDs and a
device advertising one of them is heard (bluez#2282); from 5.83 FilterDiscoverable (on by
default) drops devices that do not advertise as discoverable from a discovery bluetoothd
counts as unfiltered. blectl's service filter is its own and its default filter counts as
filtered: both work on every version."""
import dbus

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403


def bluetoothd_owner():
    """org.bluez's unique bus name: a new one means bluetoothd was restarted (crashed)."""
    b = bus()
    try:
        return str(b.get_name_owner("org.bluez"))
    finally:
        b.close()


def test_scan_service():
    """scan --service 180f: blesim Real listed (it advertises 180f), every record carrying
    180f, exit 0, and bluetoothd still the same process afterwards (5.87 would segfault on a
    filter with UUIDs)."""
    owner = bluetoothd_owner()
    r = blectl("scan", "--service", "180f", "--timeout", "6")
    expect_rc(r, 0)
    found = {d["address"]: d for d in r.json_lines()}
    check(PERIPHERAL in found, f"{PERIPHERAL} in scan --service 180f: {sorted(found)}")
    check_scan_entry(found[PERIPHERAL], after_connect=True)  # uuids: advertised or resolved
    for address, d in found.items():
        check("180f" in d["uuids"], f"{address} listed by scan --service 180f advertises 180f: {d['uuids']}")
    eq(bluetoothd_owner(), owner, "org.bluez's owner (bluetoothd did not crash and restart)")
    eq(bool(adapter_props()["Powered"]), True, "hci0 still powered")
    note(f"scan --service 180f on bluetoothd {rig.bluez[0]}.{rig.bluez[1]}: {sorted(found)}")
    assert_idle("scan --service 180f")


def test_battery_not_discoverable():
    """get-battery of blesim Quiet, which advertises without the Flags AD (neither General
    nor Limited Discoverable), unknown to bluetoothd beforehand (RemoveDevice): found by
    scanning, 42 from its Battery service, on every version (5.87: FilterDiscoverable on)."""
    if remove_device(QUIET):
        note("blesim Quiet removed from bluetoothd first (RemoveDevice)")
    r = blectl("get-battery", QUIET, "--timeout", "20")
    expect_rc(r, 0)
    d = r.json()
    eq((d["address"], d["percentage"]), (QUIET, 42), f"get-battery of a device not advertising as discoverable ({r})")
    note(f"get-battery {QUIET} (no discoverable flags) on bluetoothd {rig.bluez[0]}.{rig.bluez[1]}: "
         f"source {d['source']}, {r.elapsed:.2f} s")
    assert_idle("get-battery of blesim Quiet")


def test_info_not_discoverable():
    """info of blesim Quiet, unknown to bluetoothd beforehand: found by scanning and
    printed with its advertised name and manufacturer data, no UUIDs, on every version."""
    if remove_device(QUIET):
        note("blesim Quiet removed from bluetoothd first (RemoveDevice)")
    r = blectl("info", QUIET, "--timeout", "15")
    expect_ok(r)
    d = r.json()
    eq(list(d), INFO_KEYS, "info keys in order")
    eq({k: d[k] for k in ("address", "address_type", "name", "connected", "uuids", "manufacturer_data")},
       {"address": QUIET, "address_type": "random", "name": "blesim Quiet", "connected": False, "uuids": [],
        "manufacturer_data": {"05f1": "02"}}, f"info of a device not advertising as discoverable ({r})")
    assert_idle("info of blesim Quiet")
