"""Acceptance tests against a real bluetoothd: `blectl adapters`, `info` and `devices`: what bluetoothd knows, without connecting."""
import re
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_adapter():
    a = adapter_props()
    eq(bool(a["Powered"]), True, "hci0 Powered")
    eq(str(a["Address"]), "00:1A:7D:DA:71:13", "hci0 Address (bumble's public address)")
    eq(bool(a["Discovering"]), False, "Discovering at start")


def test_adapters():
    r = blectl("adapters")
    expect_ok(r)
    a = adapter_props()
    # Stock bluetoothd in the VM: Alias is main.conf's default name "BlueZ %v" (no
    # hostnamed), Pairable false (AlwaysPairable=false and no default agent registered);
    # roles from mgmt's LE and advertising settings. PowerState: experimental in 5.66
    # (absent without --experimental), exported by default from 5.82 on.
    version = f"{rig.bluez[0]}.{rig.bluez[1]}"
    alias = f"BlueZ {version}"
    power_state = "on" if bluez_at_least(5, 82) else None
    # Connectable (5.79+), Manufacturer and Version (5.71+): bumble's controller says company
    # 0xFFFF (reserved for tests: no name) and HCI version 9 (Core 5.0); not connectable (no
    # advertising). ExperimentalFeatures: none on these kernels.
    facts = bluez_at_least(5, 79)
    record = {"name": "hci0", "address": "00:1A:7D:DA:71:13", "alias": alias, "powered": True,
              "power_state": power_state, "discovering": False, "pairable": False, "discoverable": False,
              "roles": ["central", "peripheral"],
              "connectable": False if facts else None, "manufacturer": 65535 if facts else None,
              "manufacturer_name": None, "version": 9 if facts else None, "version_name": "5.0" if facts else None,
              "experimental_features": None}
    eq(r.json_lines(), [record], "adapters")
    eq(list(r.json_lines()[0]), list(record), "adapters keys in order")
    eq((str(a["Alias"]), bool(a["Pairable"]), bool(a["Discoverable"]), [str(x) for x in a["Roles"]]),
       (alias, False, False, ["central", "peripheral"]), "Adapter1 over D-Bus, the same")
    eq(str(a["PowerState"]) if "PowerState" in a else None, power_state,
       f"Adapter1.PowerState on bluetoothd {version} without --experimental")
    t = blectl("adapters", "--format", "text")
    expect_ok(t)
    # Cells compared (columns are two spaces apart or more; alignment is the simulator tests').
    eq([re.split(r" {2,}", line.strip()) for line in t.out.splitlines()], [
        ["NAME", "ADDRESS", "POWERED", "POWER_STATE", "DISCOVERING", "PAIRABLE", "DISCOVERABLE", "ROLES", "CONNECTABLE",
         "MANUFACTURER", "MANUFACTURER_NAME", "VERSION", "VERSION_NAME", "EXPERIMENTAL_FEATURES", "ALIAS"],
        ["hci0", "00:1A:7D:DA:71:13", "yes", power_state or "-", "no", "no", "no", "central,peripheral",
         "no" if facts else "-", "65535" if facts else "-", "-", "9" if facts else "-", "5.0" if facts else "-", "-", alias],
    ], "adapters --format text")
    missing = blectl("--adapter", "hci1", "adapters")
    expect_error(missing, 69, "unavailable", "Bluetooth adapter hci1 not found", operation="adapter", address=None)
    assert_idle("adapters")


def test_info():
    """info of a device BlueZ does not know (removed first): found by scanning and printed
    while heard (RSSI -50, TxPower 4, the advertised UUIDs); then known (RSSI and TxPower
    gone with the discovery); after a connection, the resolved UUIDs; an unknown address 2."""
    if remove_device():
        note("info: blesim Real removed from bluetoothd first (RemoveDevice)")
    r = blectl("info", PERIPHERAL, "--timeout", "15")
    expect_ok(r)
    d = r.json()
    eq(list(d), INFO_KEYS, "info keys in order")
    # bumble gives every advertising report RSSI -50 (README).
    eq(d, info_record(rssi=-50, tx_power=4), "info while scanning")
    wait_until(lambda: not bool(adapter_props()["Discovering"]), 3.0, "Discovering false after info's scan")
    cached = blectl("info", PERIPHERAL, "--timeout", "0")
    expect_ok(cached)
    eq(cached.json(), info_record(), "info of the device BlueZ now knows (RSSI, TxPower invalidated)")
    c = blectl("connect", PERIPHERAL, "--timeout", "30")
    expect_rc(c, 0)
    assert_idle("connect before info")
    resolved = blectl("info", PERIPHERAL)
    expect_ok(resolved)
    eq(resolved.json(), info_record(uuids=RESOLVED_UUIDS), "info after a connection")
    unknown = blectl("info", MISSING, "--timeout", "3")
    expect_error(unknown, 2, "device_not_found", f"device {MISSING} not found", operation="device_lookup", address=MISSING)
    check(2.5 <= unknown.elapsed <= 6.0, f"info of an unknown address ends at its 3 s timeout: {unknown.elapsed:.2f} s")
    zero = blectl("info", MISSING, "--timeout", "0")
    expect_error(zero, 2, "device_not_found", f"device {MISSING} not found", operation="device_lookup", address=MISSING)
    assert_idle("info")


def test_devices():
    """devices: blesim Real as BlueZ keeps it (cached, no RSSI), the fillers only if BlueZ
    still has them (temporary devices, dropped 30 s after their last advertisement);
    --paired none; --connected only while a link is up, with Battery1's percentage."""
    r = blectl("devices")
    expect_ok(r)
    lines = r.json_lines()
    addresses = [d["address"] for d in lines]
    eq(addresses, sorted(addresses), "devices ordered by address")
    check(PERIPHERAL in addresses, f"{PERIPHERAL} listed: {addresses}")
    check(set(addresses) <= {PERIPHERAL, FILLER, FILLER[:-1] + "2", QUIET}, f"only the VM's devices: {addresses}")
    for d in lines:
        eq(list(d), INFO_KEYS, f"keys of {d['address']}")
    p = next(d for d in lines if d["address"] == PERIPHERAL)
    check(p["uuids"] in (["180f", "180a"], RESOLVED_UUIDS), f"uuids advertised or resolved: {p['uuids']}")
    eq(p, info_record(uuids=p["uuids"]), "devices: blesim Real")
    for d in lines:
        if d["address"] == FILLER:
            eq(d, info_record(address=FILLER, name="blesim Filler", alias="blesim Filler", uuids=[],
                              manufacturer_data={"05f1": "11"}), "devices: the filler")
    note(f"devices: {addresses}")
    for flags in (["--paired"], ["--connected"], ["--connected", "--paired"]):
        f = blectl("devices", *flags)
        expect_ok(f)
        eq(f.out, "", f"devices {' '.join(flags)} with nothing paired or connected")
    with HeldLink():
        held = blectl("devices", "--connected")
        expect_ok(held)
        eq(held.json_lines(), [info_record(connected=True, services_resolved=True, uuids=RESOLVED_UUIDS,
                                           battery_percentage=73)], "devices --connected with a link held")
        both = blectl("devices", "--connected", "--paired")
        expect_ok(both)
        eq(both.out, "", "devices --connected --paired: connected but not paired")
        eq(connected_devices(), [PERIPHERAL], "devices connected nothing and disconnected nothing")
    assert_idle("devices")
