"""Acceptance tests against a real bluetoothd: `blectl request`."""
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_request():
    """The vendor protocol through request: 01 -> 81 03 01 04, 02 -> 82 49 (0x82 alone is no
    UTF-8: text null), any other -> EE cmd."""
    for value, prefix, response in (("01", "81", "81030104"), ("02", "82", "8249"), ("03", None, "ee03")):
        r = blectl(*request_argv(value, *(["--response-prefix", prefix] if prefix else [])))
        expect_ok(r)
        eq(r.json(), {"address": PERIPHERAL, "request": value, "responses": [{"value": response, "text": None}]},
           f"request {value}")
        assert_idle(f"request {value}")
    t = blectl("request", PERIPHERAL, "A", "--text", "--write", VENDOR_WRITE, "--notify", VENDOR_NOTIFY,
               "--response-prefix", "0xee", "--format", "text")
    expect_ok(t)
    eq(squeezed(t.out), [f"address: {PERIPHERAL}", "request: 41", "responses: 1", "1: ee41 -"], "request --text --format text")
    assert_idle("request --text")


def test_request_timeout():
    """--count 2 when the device answers once: 124 naming the response wait at the 6 s
    deadline; notifications stopped and the link closed."""
    r = blectl("request", PERIPHERAL, "01", "--write", VENDOR_WRITE, "--notify", VENDOR_NOTIFY, "--count", "2",
               "--timeout", "6")
    expect_error(r, 124, "timed_out",
                 f"timed out waiting for the response notification of characteristic {VENDOR_NOTIFY} in service "
                 f"{VENDOR_SERVICE} on {PERIPHERAL}",
                 operation="response", service=VENDOR_SERVICE, characteristic=VENDOR_NOTIFY)
    check(5.8 <= r.elapsed <= 8.0, f"ends at its 6 s deadline (took {r.elapsed:.2f} s)")
    assert_idle("request --count 2")


def test_request_after_failure():
    """request right after a failed command, while bluetoothd still holds the link for its
    disconnect timer (and refuses StartNotify there): the exact answer, the request written
    once, nothing left."""
    commands, _ = peripheral_counters()
    linked, r = fail_then(lambda: blectl(*request_argv("01", "--response-prefix", "81")))
    expect_ok(r)
    eq(r.json(), {"address": PERIPHERAL, "request": "01", "responses": [{"value": "81030104", "text": None}]}, "request 01")
    eq(peripheral_counters()[0], commands + ["01"], "the peripheral received the request once")
    if not linked:
        note("request after a failure: the failed command's link was already down (nothing to test this time)")
    assert_no_notify_session("request after a failed command")
