"""Acceptance tests against a real bluetoothd: `blectl disconnect`, `pair` and `unpair`."""
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_disconnect_held():
    """A link another client holds (Device1.Connect from this script): read and connect
    leave it up (was_connected true); disconnect closes it, answered once the link is down
    (BlueZ's 2 s disconnect timer); then was_connected false."""
    with HeldLink() as link:
        note(f"held link: Device1.Connect answered in {link.connect_s:.2f} s")
        r = blectl("read", PERIPHERAL, "2a19", "--timeout", "30")
        expect_ok(r)
        eq(r.json()["value"], "49", "read on the held link")
        check(connected_now(), "read left the held link up")
        c = blectl("connect", PERIPHERAL, "--timeout", "30")
        expect_ok(c)
        eq(c.json()["was_connected"], True, "connect: was_connected")
        check(connected_now(), "connect left the held link up")
        i = blectl("info", PERIPHERAL)
        expect_ok(i)
        eq(i.json(), info_record(connected=True, services_resolved=True, uuids=RESOLVED_UUIDS, battery_percentage=73),
           "info with the link held")
        d = blectl("disconnect", PERIPHERAL)
        expect_ok(d)
        eq(d.json(), {"address": PERIPHERAL, "was_connected": True}, "disconnect of the held link")
        eq(connected_devices(), [], "no Connected device as disconnect exits")
        # BlueZ's "2 s" disconnect timer is a g_timeout_add_seconds: it fires 1 to 2 s later.
        check(1.0 <= d.elapsed <= 6.0, f"disconnect waited for BlueZ's disconnect timer: {d.elapsed:.2f} s")
        note(f"disconnect of a held link: {d.elapsed:.2f} s")
    again = blectl("disconnect", PERIPHERAL)
    expect_ok(again)
    eq(again.json(), {"address": PERIPHERAL, "was_connected": False}, "disconnect once the link is down")
    assert_idle("disconnect")


def test_disconnect_not_connected():
    r = blectl("disconnect", PERIPHERAL, "--format", "text")
    expect_ok(r)
    eq(squeezed(r.out), [f"address: {PERIPHERAL}", "was_connected: no"], "disconnect of a known device that is not connected")
    u = blectl("disconnect", MISSING)
    expect_ok(u)
    eq(u.json(), {"address": MISSING, "was_connected": False}, "disconnect of an address BlueZ does not know")
    check(u.elapsed < 3.0, f"no scan: {u.elapsed:.2f} s")
    check(not known(MISSING), "no device object made for it")
    assert_idle("disconnect of devices not connected")


def test_unpair_connected():
    """unpair of a device another client holds connected: RemoveDevice disconnects it
    first; the device object is gone; a second unpair is 2."""
    with HeldLink(battery1=False):
        r = blectl("unpair", PERIPHERAL)
        expect_ok(r)
        eq(r.json(), {"address": PERIPHERAL, "removed": True, "was_paired": False, "was_connected": True}, "unpair")
        check(not known(), "the device object is gone")
        eq(connected_devices(), [], "no Connected device")
    again = blectl("unpair", PERIPHERAL)
    expect_error(again, 2, "device_not_found", f"device {PERIPHERAL} not found", operation="device_lookup")
    assert_idle("unpair of a connected device")


def test_pair_unpair():
    """Just Works with bumble's default pairing (NoInputNoOutput, bonding): paired and
    bonded, blectl's agent (the default one while registered) gone again, the link closed;
    a bonded reconnection reads; pair again is 'paired already' (no new pairing, --trust
    applied); unpair removes it (was_paired true), a second unpair is 2."""
    _, pairings = peripheral_counters()
    try:
        r = blectl("pair", PERIPHERAL, "--timeout", "30")
        expect_ok(r)
        eq(r.json(), {"address": PERIPHERAL, "paired": True, "bonded": True, "trusted": False}, "pair")
        eq(peripheral_counters()[1], pairings + 1, "pairings the peripheral completed")
        assert_idle("pair")
        eq(bool(adapter_props()["Pairable"]), False, "Pairable false again once blectl's agent is gone")
        p = blectl("devices", "--paired")
        expect_ok(p)
        eq(p.json_lines(), [info_record(paired=True, bonded=True, uuids=RESOLVED_UUIDS)], "devices --paired")
        read = blectl("read", PERIPHERAL, "2a19", "--timeout", "30")
        expect_ok(read)
        eq(read.json()["value"], "49", "read over the bonded (encrypted) link")
        assert_idle("read of the bonded device")
        again = blectl("pair", PERIPHERAL, "--trust")
        expect_ok(again)
        eq(again.json(), {"address": PERIPHERAL, "paired": True, "bonded": True, "trusted": True}, "pair --trust when paired")
        eq(peripheral_counters()[1], pairings + 1, "no new pairing")
        u = blectl("unpair", PERIPHERAL)
        expect_ok(u)
        eq(u.json(), {"address": PERIPHERAL, "removed": True, "was_paired": True, "was_connected": False}, "unpair")
        check(not known(), "the device object is gone")
        twice = blectl("unpair", PERIPHERAL)
        expect_error(twice, 2, "device_not_found", f"device {PERIPHERAL} not found", operation="device_lookup")
        assert_idle("unpair")
    finally:
        if known() and bool(device_prop(PERIPHERAL, "Paired")):
            remove_device()
            note("pair test: blesim Real was left paired, removed")
