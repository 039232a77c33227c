"""Acceptance tests against a real bluetoothd: `blectl write`, and `write --file` inside the VM (fd passing needs its Unix socket bus)."""
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_write_vendor():
    """write to the vendor command characteristic: with response, without (a Write
    Command), --text; each value reaches bumble exactly once (its own count)."""
    commands, _ = peripheral_counters()
    for argv, record, value in (
        (["a5"], write_record(1, "request"), "a5"),
        (["5a", "--without-response"], write_record(1, "command"), "5a"),
        (["--text", "hi"], write_record(2, "request"), "6869"),
    ):
        r = blectl("write", PERIPHERAL, VENDOR_WRITE, *argv, "--timeout", "30")
        expect_ok(r)
        eq(r.json(), record, f"write {' '.join(argv)}")
        commands.append(value)
        # A Write Command is reported done once queued: give it the time to arrive.
        wait_until(lambda: peripheral_counters()[0] == commands, 3.0, f"the peripheral received {commands[-3:]}")
        assert_idle(f"write {' '.join(argv)}")


def test_write_claimed():
    """A writable characteristic inside 0x180A, a service bluetoothd's deviceinfo plugin
    claims. 5.66 exports the service as it is: the write succeeds and reaches the device
    exactly once. 5.80 and later export claimed services read-only: WriteValue fails
    org.bluez.Error.NotAuthorized and nothing reaches the device; blectl says so with its
    own code, service_read_only (exit 77), and how to change it (main.conf's
    ExportClaimedServices), not the pairing hint of not_permitted."""
    before = claimed_writes()
    r = blectl("write", PERIPHERAL, CLAIMED_WRITE, "c1", "--timeout", "30")
    if claimed_read_only():
        expect_rc(r, 77)
        eq(r.out, "", f"stdout of a failed write")
        e = error_of(r)
        eq({k: e[k] for k in ("code", "exit_status", "retryable", "operation", "address", "service", "characteristic", "dbus_error")},
           {"code": "service_read_only", "exit_status": 77, "retryable": False, "operation": "write", "address": PERIPHERAL,
            "service": "180a", "characteristic": CLAIMED_WRITE, "dbus_error": "org.bluez.Error.NotAuthorized"},
           f"error object ({r})")
        check("ExportClaimedServices" in e["message"] and "pair" not in e["message"],
              f"the message names main.conf's ExportClaimedServices, no pairing hint: {e['message']!r}")
        time.sleep(0.5)
        eq(claimed_writes(), before, "nothing reached the device")
    else:
        expect_ok(r)
        eq(r.json(), {**write_record(1, "request"), "service": "180a", "characteristic": CLAIMED_WRITE},
           "write to the claimed service's characteristic")
        wait_until(lambda: claimed_writes() == before + ["c1"], 3.0, "the device received c1")
        time.sleep(0.5)
        eq(claimed_writes(), before + ["c1"], "the device received the write exactly once")
    note(f"write to {CLAIMED_WRITE} in 0x180A: exit {r.rc}")
    assert_idle("write to a claimed service")


def test_write_refused():
    """Flags that do not allow the write: exit 3 before anything is sent (bluetoothd would
    pass a write to 2a19 on); the Battery Level reads 73 afterwards."""
    before = peripheral_counters()
    r = blectl("write", PERIPHERAL, "2a19", "00", "--timeout", "30")
    expect_error(r, 3, "not_supported",
                 f"not supported by the device: characteristic 2a19 (Battery Level) in service 180f (Battery) on {PERIPHERAL} cannot be written "
                 "with response (flags: read notify)",
                 operation="write", service="180f", characteristic="2a19")
    assert_idle("write to 2a19")
    n = blectl("write", PERIPHERAL, VENDOR_NOTIFY, "01", "--without-response", "--timeout", "30")
    expect_error(n, 3, "not_supported",
                 f"not supported by the device: characteristic {VENDOR_NOTIFY} in service {VENDOR_SERVICE} on {PERIPHERAL} "
                 "cannot be written without response (flags: notify)",
                 operation="write", service=VENDOR_SERVICE, characteristic=VENDOR_NOTIFY)
    eq(peripheral_counters(), before, "the peripheral received nothing")
    assert_idle("write to the notify characteristic")
    back = blectl("read", PERIPHERAL, "2a19", "--timeout", "30")
    expect_ok(back)
    eq(back.json(), read_record("2a19", "180f", "49", "I", decoded=decoded_one("Battery Level", "Battery Level", 73, "percentage")), "2a19 read back unchanged")
    assert_idle("read after the refused writes")


def test_write_file_in_vm():
    """write --without-response --file, blectl in the VM: through AcquireWrite (acquired
    true), packets of MTU - 3 bytes, 512 at most (bluetoothd reads 512 bytes of a datagram);
    bumble received the file byte-exact (length
    and sha256), in as many Write Commands as blectl reports, over a link of the MTU
    blectl reports; then --file - (stdin) the same way."""
    data = random.Random(10).randbytes(5000)
    for source, kwargs in (("/tmp/blob", {"files": {"/tmp/blob": data}}), ("-", {"stdin": data})):
        eq(bumble("reset-stream"), ["reset"], "bumble reset-stream")
        r = vm_blectl("write", PERIPHERAL, VENDOR_WRITE, "--without-response", "--file", source, "--timeout", "60", **kwargs)
        expect_ok(r)
        record = r.json()
        eq(list(record), ["address", "service", "characteristic", "bytes", "packets", "mtu", "acquired", "seconds"],
           "keys of the write --file record")
        mtu = record["mtu"]
        check(isinstance(mtu, int) and 23 <= mtu <= 517, f"mtu {mtu}")
        eq({k: record[k] for k in ("address", "service", "characteristic", "bytes", "packets", "acquired")},
           {"address": PERIPHERAL, "service": VENDOR_SERVICE, "characteristic": VENDOR_WRITE, "bytes": len(data),
            "packets": -(-len(data) // min(mtu - 3, 512)), "acquired": True}, f"write --file {source}")
        # Write Commands are not acknowledged: give the last ones the time to arrive.
        want = {"bytes": len(data), "packets": record["packets"], "largest": min(mtu - 3, 512),
                "sha256": hashlib.sha256(data).hexdigest(), "mtu": str(mtu)}
        try:
            wait_until(lambda: stream_received() == want, 10.0, "the whole file at the peripheral")
        except Failed:
            eq(stream_received(), want, f"what the peripheral received of --file {source}")
        note(f"write --file {source} in the VM: {len(data)} bytes in {record['packets']} packets, MTU {mtu}, "
             f"{record['seconds']} s")
        assert_idle(f"write --file {source} in the VM")
