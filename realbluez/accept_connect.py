"""Acceptance tests against a real bluetoothd: `blectl connect`: services, a missing device, Ctrl-C, two at once, bluetoothd restarting."""
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_connect():
    r = blectl("connect", PERIPHERAL, "--timeout", "30")
    expect_rc(r, 0)
    d = r.json()
    eq(d["address"], PERIPHERAL, "address")
    eq(d["name"], "blesim Real", "name")
    eq(d["address_type"], "random", "address_type")
    eq(d["adapter"], "hci0", "adapter")
    eq(d["was_connected"], False, "was_connected")
    services = {s["uuid"]: s for s in d["services"]}
    for s in d["services"]:
        eq(s["primary"], True, f"service {s['uuid']} primary")
    vs, vw, vn = VENDOR[1], VENDOR[3], VENDOR[5]
    for uuid in ("180f", "180a", vs):
        check(uuid in services, f"service {uuid} in {sorted(services)}")
    eq(services["180f"]["name"], "Battery", "180f name")
    eq(services["180a"]["name"], "Device Information", "180a name")
    f = flags_by_uuid(d["services"])
    eq(f[("180f", "2a19")], (["notify", "read"], ["2902"]), "2a19 flags, descriptors")
    for c in ("2a24", "2a26", "2a29"):
        eq(f[("180a", c)], (["read"], []), f"{c} flags, descriptors")
    eq(sorted(c for s, c in f if s == "180a"), ["2a24", "2a26", "2a29", CLAIMED_WRITE], "0x180A characteristics")
    eq(f[("180a", CLAIMED_WRITE)], (["write"], []), "the claimed service's writable characteristic: flags as the device has them")
    # GAP 0x1800: claimed by bluetoothd's gap plugin, hidden by 5.66, exported (read-only)
    # by 5.80 and later. 0x1801 is exported by every version.
    expected = ["1801", "180a", "180f", vs] + (["1800"] if claimed_read_only() else [])
    eq(sorted(services), sorted(expected), f"services exported by bluetoothd {rig.bluez[0]}.{rig.bluez[1]}")
    if claimed_read_only():
        eq(services["1800"]["name"], "GAP", "1800 name")
        eq(sorted(c for s, c in f if s == "1800"), ["2a00", "2a01"], "GAP characteristics")
        eq(f[("1800", "2a00")][0], ["read"], "2a00 flags")
    eq(f[(vs, vw)], (["write", "write-without-response"], []), "vendor write flags")
    eq(f[(vn, vn)] if (vn, vn) in f else f[(vs, vn)], (["notify"], ["2902"]), "vendor notify flags")
    note(f"connect: services {[s['uuid'] for s in d['services']]} in {r.elapsed:.2f} s")
    assert_idle("connect")


def test_missing_device():
    r = blectl("connect", MISSING, "--timeout", "5")
    expect_rc(r, 2)
    err = json.loads(r.out.strip().splitlines()[-1]) if r.out.strip() else json.loads(r.err.strip().splitlines()[-1])
    eq(err["error"]["code"], "device_not_found", "error code")
    check(4.5 <= r.elapsed <= 8.0, f"ends at its 5 s deadline (took {r.elapsed:.2f} s)")
    note(f"connect {MISSING} --timeout 5: exit 2 after {r.elapsed:.2f} s")
    assert_idle("connect to a missing device")


def test_sigint_connect_early():
    r, at = interrupted(["connect", PERIPHERAL, "--timeout", "30"],
                        lambda p, t0: time.monotonic() - t0 > 0.3)
    check(at is not None, f"blectl still running 0.3 s after start: {r}")
    expect_rc(r, 130)
    assert_idle("SIGINT 0.3 s into connect")


def test_sigint_connect_linked():
    """SIGINT once the link is up (Device1.Connected true), before blectl is done."""
    def linked(p, t0):
        try:
            return bool(device_prop(PERIPHERAL, "Connected"))
        except dbus.DBusException:
            return False
    r, at = interrupted(["connect", PERIPHERAL, "--timeout", "30"], linked)
    if at is None:
        raise Failed(f"blectl finished before Connected was seen true: {r}")
    note(f"SIGINT sent {at:.2f} s into connect, with Connected true; blectl exited {r.rc} "
         f"{r.elapsed - at:.2f} s later")
    expect_rc(r, 130)
    assert_idle("SIGINT with the link up")


def test_two_connects_at_once():
    """Two get-battery started together: bluetoothd answers the second Connect Failed
    "Operation already in progress" (EALREADY); that command waits for the other's link
    and uses it (or connects again when it has gone). Both read 73; nothing is left."""
    runs = together("get-battery", PERIPHERAL, "--timeout", "30")
    for r in runs:
        expect_rc(r, 0)
        eq(r.json()["percentage"], 73, f"percentage ({r})")
    note(f"two get-battery at once: {[f'{r.elapsed:.2f} s' for r in runs]}")
    assert_idle("two get-battery at once")


def test_bluetoothd_restart_during_connect():
    """bluetoothd restarted as soon as the link is up in get-version, while the services
    are being resolved (it drops the link, then leaves the bus): exit 69 unavailable, not 4
    disconnected; nothing left afterwards. A fresh bluetoothd first, so that resolving the
    services takes a GATT discovery (a daemon that has resolved them before is too quick)."""
    restart_bluetoothd()
    p = subprocess.Popen([rig.args.blectl, "get-version", PERIPHERAL, "--timeout", "30"], env=env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t = time.monotonic()
    linked = False
    while p.poll() is None and time.monotonic() - t < 25:
        try:
            linked = bool(device_prop(PERIPHERAL, "Connected"))
        except dbus.DBusException:
            linked = False
        if linked:
            break
        time.sleep(0.02)
    check(linked, f"Connected true while get-version ran (exit {p.poll()})")
    at = time.monotonic() - t
    restart_bluetoothd()
    out, err = p.communicate(timeout=60)
    r = Run(["get-version", PERIPHERAL], p.returncode, out, err, time.monotonic() - t)
    expect_rc(r, 69)
    e = json.loads(r.err.strip().splitlines()[-1])["error"]
    eq(e["code"], "unavailable", f"error code ({r})")
    note(f"bluetoothd restarted {at:.2f} s into get-version, with the link up: exit 69 \"{e['message']}\" "
         f"{r.elapsed:.2f} s after start")
    assert_idle("a bluetoothd restart during get-version")


def test_connect_noplugin():
    r = blectl("connect", PERIPHERAL, "--timeout", "30")
    expect_rc(r, 0)
    services = [s["uuid"] for s in r.json()["services"]]
    check("180f" in services, f"180f exported without the battery plugin: {services}")
    assert_idle("connect --noplugin=battery")
