"""Acceptance tests against a real bluetoothd: `blectl adapters`, `info` and `devices`: what bluetoothd knows, without connecting."""
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
    # Stock bluetoothd 5.66 in the VM: Alias is main.conf's default name "BlueZ %v" (no
    # hostnamed), Pairable false (AlwaysPairable=false and no default agent registered),
    # no PowerState without --experimental; roles from mgmt's LE and advertising settings.
    record = {"name": "hci0", "address": "00:1A:7D:DA:71:13", "alias": "BlueZ 5.66", "powered": True,
              "power_state": None, "discovering": False, "pairable": False, "discoverable": False,
              "roles": ["central", "peripheral"]}
    eq(r.json_lines(), [record], "adapters")
    eq(list(r.json_lines()[0]), list(record), "adapters keys in order")
    eq((str(a["Alias"]), bool(a["Pairable"]), bool(a["Discoverable"]), [str(x) for x in a["Roles"]]),
       ("BlueZ 5.66", False, False, ["central", "peripheral"]), "Adapter1 over D-Bus, the same")
    check("PowerState" not in a, f"no PowerState without --experimental: {a.get('PowerState')}")
    t = blectl("adapters", "--format", "text")
    expect_ok(t)
    eq(t.out.splitlines(), [
        "NAME  ADDRESS            POWERED  POWER_STATE  DISCOVERING  PAIRABLE  DISCOVERABLE  ROLES               ALIAS",
        "hci0  00:1A:7D:DA:71:13  yes      -            no           no        no            central,peripheral  BlueZ 5.66",
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
    check(set(addresses) <= {PERIPHERAL, FILLER, FILLER[:-1] + "2"}, f"only the VM's devices: {addresses}")
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
