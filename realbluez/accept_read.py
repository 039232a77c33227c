"""Acceptance tests against a real bluetoothd: `blectl read`."""
import json
import signal
import subprocess
import threading
import time

import rig
from rig import *  # noqa: F401,F403 (check, eq, blectl, the D-Bus view, ...)
from rig_gatt import *  # noqa: F401,F403
from rig_notify import *  # noqa: F401,F403


def test_read_battery():
    r = blectl("read", PERIPHERAL, "2a19", "--timeout", "30")
    expect_ok(r)
    eq(r.json(), read_record("2a19", "180f", "49", "I", decoded=decoded_one("Battery Level", "Battery Level", 73, "percentage")), "read 2a19")
    eq(list(r.json()), ["address", "service", "characteristic", "descriptor", "value", "text", "decoded"], "read keys in order")
    assert_idle("read 2a19")


def test_read_device_information():
    r = blectl("read", PERIPHERAL, "2a26", "--timeout", "30")
    expect_ok(r)
    eq(r.json(), read_record("2a26", "180a", "332e312e34", "3.1.4",
                               decoded=decoded_one("Firmware Revision String", "Firmware Revision", "3.1.4")), "read 2a26")
    assert_idle("read 2a26")
    t = blectl("read", PERIPHERAL, "2a29", "--format", "text", "--timeout", "30")
    expect_ok(t)
    eq(squeezed(t.out), [
        f"address: {PERIPHERAL}", "service: 180a (Device Information)",
        "characteristic: 2a29 (Manufacturer Name String)", "descriptor: -",
        "value: " + b"Bumble Labs".hex(), 'text: "Bumble Labs"',
        'decoded: Manufacturer Name String: Manufacturer Name "Bumble Labs"',
    ], "read 2a29 --format text")
    assert_idle("read 2a29 --format text")


def test_read_offset():
    """--offset past the end: bluetoothd's InvalidArguments "Invalid offset" (ATT Invalid
    Offset), exit 1 as documented. --offset inside a short value: bumble answers the Read
    Blob with ATT Attribute Not Long (0x0b, allowed for a value that fits one PDU), which
    bluetoothd 5.66 passes on as org.bluez.Error.Failed: exit 1."""
    past = blectl("read", PERIPHERAL, "2a26", "--offset", "100", "--timeout", "30")
    expect_error(past, 1, "bluez_failed",
                 f"read of characteristic 2a26 (Firmware Revision String) in service 180a (Device Information) on {PERIPHERAL} failed: "
                 "org.bluez.Error.InvalidArguments: Invalid offset",
                 operation="read", service="180a", characteristic="2a26", dbus_error="org.bluez.Error.InvalidArguments")
    assert_idle("read --offset 100")
    inside = blectl("read", PERIPHERAL, "2a26", "--offset", "2", "--timeout", "30")
    expect_error(inside, 1, "bluez_failed",
                 f"read of characteristic 2a26 (Firmware Revision String) in service 180a (Device Information) on {PERIPHERAL} failed: "
                 "org.bluez.Error.Failed: Operation failed with ATT error: 0x0b",
                 operation="read", service="180a", characteristic="2a26", dbus_error="org.bluez.Error.Failed")
    assert_idle("read --offset 2")


def test_read_descriptor():
    """The CCC (0x2902) is read from the device. 2a19's is the battery plugin's own
    subscription: 01 00 once the plugin has subscribed (after it read the level), 00 00
    before; the vendor notify characteristic's: 00 00 (nobody subscribed)."""
    r = blectl("read", PERIPHERAL, "2a19", "--descriptor", "2902", "--timeout", "30")
    expect_ok(r)
    d = r.json()
    check(d["value"] in ("0000", "0100"), f"2a19's CCC is 0000 or 0100: {d}")
    eq(d, read_record("2a19", "180f", d["value"], None, descriptor="2902"), "read 2a19 --descriptor 2902")
    note(f"read 2a19 --descriptor 2902 on a fresh link (battery plugin): {d['value']}")
    assert_idle("read --descriptor 2902")
    with HeldLink():
        held = blectl("read", PERIPHERAL, "2a19", "--descriptor", "0x2902", "--timeout", "30")
        expect_ok(held)
        eq(held.json(), read_record("2a19", "180f", "0100", None, descriptor="2902"),
           "2a19's CCC once the battery plugin has subscribed (held link)")
        vendor = blectl("read", PERIPHERAL, VENDOR_NOTIFY, "--descriptor", "2902", "--timeout", "30")
        expect_ok(vendor)
        eq(vendor.json(), read_record(VENDOR_NOTIFY, VENDOR_SERVICE, "0000", None, descriptor="2902"),
           "the vendor notify characteristic's CCC")
        check(connected_now(), "a link held by another client is left up by read")
    assert_idle("read --descriptor with a link held")


def test_read_gap():
    """The Device Name 0x2A00 in GAP 0x1800, which the device has and bluetoothd's gap
    plugin claims: 5.66 exports no GattService1 for it (exit 3 not_supported, nothing
    read); 5.80 and later export it read-only and the read answers the device's name."""
    gap = blectl("read", PERIPHERAL, "2a00", "--timeout", "30")
    if claimed_read_only():
        expect_ok(gap)
        eq(gap.json(), read_record("2a00", "1800", b"blesim Real".hex(), "blesim Real"), "read 2a00 (GAP exported)")
    else:
        expect_error(gap, 3, "not_supported", f"not supported by the device: no characteristic 2a00 (Device Name) on {PERIPHERAL}",
                     operation="service_lookup", characteristic="2a00")
    assert_idle("read 2a00")


def test_read_refused():
    """Refused before anything is read (exit 3): a descriptor the characteristic lacks, a
    characteristic without the read flag (the flags in bluetoothd's order)."""
    desc = blectl("read", PERIPHERAL, "2a26", "--descriptor", "2902", "--timeout", "30")
    expect_error(desc, 3, "not_supported",
                 "not supported by the device: no descriptor 2902 (Client Characteristic Configuration) on characteristic "
                 f"2a26 (Firmware Revision String) in service 180a (Device Information) on {PERIPHERAL}",
                 operation="service_lookup", service="180a", characteristic="2a26")
    assert_idle("read 2a26 --descriptor 2902")
    before = peripheral_counters()
    flags = blectl("read", PERIPHERAL, VENDOR_WRITE, "--timeout", "30")
    expect_error(flags, 3, "not_supported",
                 f"not supported by the device: characteristic {VENDOR_WRITE} in service {VENDOR_SERVICE} on {PERIPHERAL} "
                 "cannot be read (flags: write-without-response write)",
                 operation="read", service=VENDOR_SERVICE, characteristic=VENDOR_WRITE)
    eq(peripheral_counters(), before, "the peripheral received nothing")
    assert_idle("read of a write-only characteristic")


def test_read_unknown_device():
    r = blectl("read", MISSING, "2a19", "--timeout", "5")
    expect_error(r, 2, "device_not_found", f"device {MISSING} not found", operation="device_lookup", address=MISSING)
    check(4.5 <= r.elapsed <= 8.0, f"ends at its 5 s deadline (took {r.elapsed:.2f} s)")
    assert_idle("read of an unknown device")


def test_read_descriptor_noplugin():
    """Without the battery plugin nobody subscribes to 2a19: its CCC is 00 00."""
    if rig.bluetoothd_args != "--noplugin=battery":  # run on its own (-k)
        restart_bluetoothd("--noplugin=battery")
    with HeldLink(battery1=False):
        r = blectl("read", PERIPHERAL, "2a19", "--descriptor", "2902", "--timeout", "30")
        expect_ok(r)
        eq(r.json(), read_record("2a19", "180f", "0000", None, descriptor="2902"), "2a19's CCC without the battery plugin")
    assert_idle("read --descriptor 2902 --noplugin=battery")
