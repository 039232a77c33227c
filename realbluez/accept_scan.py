"""Acceptance tests against a real bluetoothd: `blectl scan`."""
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_scan():
    r = blectl("scan", "--timeout", "6")
    expect_rc(r, 0)
    found = {d["address"]: d for d in r.json_lines()}
    check(PERIPHERAL in found, f"{PERIPHERAL} in scan output: {sorted(found)}")
    check_scan_entry(found[PERIPHERAL])
    check(FILLER in found and found[FILLER]["name"] == "blesim Filler",
          f"filler advertiser {FILLER} 'blesim Filler' found: {found.get(FILLER)}")
    check(FILLER[:-1] + "2" in found, f"unnamed filler F0:5E:A1:00:00:12 found: {sorted(found)}")
    note(f"scan 6 s: {len(found)} devices {sorted(found)}; blesim Real rssi {found[PERIPHERAL]['rssi']}")
    assert_idle("scan")


def test_second_scan(after_connect=False):
    r = blectl("scan", "--timeout", "4", "--name", "blesim real")
    expect_rc(r, 0)
    lines = r.json_lines()
    eq([d["address"] for d in lines], [PERIPHERAL], "second scan --name 'blesim real'")
    check_scan_entry(lines[0], after_connect)
    assert_idle("second scan")
    # --address (checked by blectl only) with --count 1: ends as soon as the device is heard.
    r = blectl("scan", "--timeout", "20", "--address", PERIPHERAL.lower(), "--count", "1")
    expect_rc(r, 0)
    eq([d["address"] for d in r.json_lines()], [PERIPHERAL], "scan --address --count 1")
    assert_idle("scan --address --count 1")


def test_two_scans_at_once():
    """Two scans started together (BlueZ 5.66 keeps one pending StartDiscovery per adapter,
    so one of the two is never answered): both end 0 at their timeout and list the
    peripheral; nothing is left discovering."""
    runs = together("scan", "--timeout", "4", "--name", "blesim real")
    for r in runs:
        expect_rc(r, 0)
        eq([d["address"] for d in r.json_lines()], [PERIPHERAL], f"addresses printed by one of two scans ({r})")
        check(r.elapsed < 10, f"ended near its 4 s timeout: {r}")
    note(f"two scans at once: exits {[r.rc for r in runs]} after {[round(r.elapsed, 2) for r in runs]} s")
    assert_idle("two scans at once")


def test_sigint_scan():
    def first_line(p, t0):
        return time.monotonic() - t0 > 3.0
    r, at = interrupted(["scan", "--timeout", "30"], first_line)
    check(at is not None, f"scan still running after 3 s: {r}")
    expect_rc(r, 130)
    addrs = [d["address"] for d in r.json_lines()]
    check(PERIPHERAL in addrs, f"{PERIPHERAL} printed before SIGINT: {addrs}")
    assert_idle("SIGINT during scan")


def test_sigterm_scan():
    r, at = interrupted(["scan", "--timeout", "30"], lambda p, t0: time.monotonic() - t0 > 2.0,
                        sig=signal.SIGTERM)
    expect_rc(r, 143)
    assert_idle("SIGTERM during scan")


def test_scan_after_interrupt():
    test_second_scan(after_connect=True)
