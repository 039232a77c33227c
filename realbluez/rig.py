"""The acceptance suite's harness (realbluez/acceptance.py runs it): the rig's world, checks
that record what they compared, blectl run on the host, the D-Bus view of the real
bluetoothd, the fixture between tests, restarting bluetoothd.

`args` is set by acceptance.py's main (the blectl binary, the bus address, the command
channel, -v): other modules read it as `rig.args`.
"""
import base64
import hashlib
import json
import random
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

import dbus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ctl  # noqa: E402


PERIPHERAL = "F0:5E:A1:00:00:01"

FILLER = "F0:5E:A1:00:00:11"

QUIET = "F0:5E:A1:00:00:02"  # "blesim Quiet": no Flags AD (not discoverable), Battery 42

CLAIMED_WRITE = "5a1e0004-6c2d-4b8e-9f3a-0c1d2e3f4a5b"  # write, inside 0x180A (claimed)

MISSING = "C0:FF:EE:DE:AD:00"


VENDOR = [
    "--vendor-service", "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
    "--vendor-write", "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
    "--vendor-notify", "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
]


SCAN_FIELDS = ["address", "address_type", "name", "rssi", "tx_power", "appearance", "uuids",
               "manufacturer_data", "company", "service_data", "service_names", "decoded", "connected", "adapter", "time",
               "first_seen", "last_seen"]


# The Bluetooth SIG's names (Sources/BlueZKit/AssignedNumbers+Tables.swift).
SIG_NAMES = {"1800": "GAP", "1801": "GATT", "180a": "Device Information", "180f": "Battery"}


args = None

bluez = (5, 66)  # the running bluetoothd's (major, minor), from Adapter1.Modalias (acceptance.py)


def bluez_at_least(major, minor):
    return bluez >= (major, minor)


def claimed_read_only():
    """5.80 and later export the services their plugins claim (0x1800 gap, 0x180A
    deviceinfo, 0x180F battery), read-only (main.conf ExportClaimedServices=read-only);
    5.66 exports no GAP service and 0x180A/0x180F writable."""
    return bluez_at_least(5, 80)

results = []   # (test, ok, detail)

skipped = []   # (test, why): rig.Skipped

observations = []

repairs = []   # (test about to run, what the fixture repaired)


def squeezed(text):
    """The lines of a --format text output with runs of spaces made one (the key: value
    forms align their values; the alignment is for people, not what these tests check)."""
    return [" ".join(line.split()) for line in text.splitlines()]


def note(text):
    observations.append(text)
    print(f"    note: {text}", flush=True)


class Failed(Exception):
    pass


class Skipped(Exception):
    """The test cannot run against this blectl (a subcommand or option it lacks): reported
    as SKIP with the reason, neither passed nor failed."""


def check(cond, what):
    if not cond:
        raise Failed(what)


def eq(actual, expected, what):
    if actual != expected:
        raise Failed(f"{what}: expected {expected!r}, got {actual!r}")


def env():
    e = dict(os.environ)
    e["DBUS_SYSTEM_BUS_ADDRESS"] = args.bus
    return e


class Run:
    def __init__(self, argv, rc, out, err, elapsed):
        self.argv, self.rc, self.out, self.err, self.elapsed = argv, rc, out, err, elapsed

    def json_lines(self):
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]

    def json(self):
        lines = self.json_lines()
        eq(len(lines), 1, f"JSON objects printed by {' '.join(self.argv)}")
        return lines[0]

    def __str__(self):
        return (f"blectl {' '.join(self.argv)} -> {self.rc} in {self.elapsed:.2f} s\n"
                f"      stdout: {self.out.strip()[:1500]}\n      stderr: {self.err.strip()[:600]}")


def blectl(*argv, timeout=90):
    t = time.monotonic()
    p = subprocess.run([args.blectl, *argv], env=env(), capture_output=True, text=True,
                       timeout=timeout)
    r = Run(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t)
    if args.verbose:
        print("    " + str(r), flush=True)
    return r


def expect_rc(r, rc):
    """rc 128+N also accepts death by signal N: blectl cleans up, then re-raises the
    signal with its default action (SignalHandling.swift), so a shell sees $? = 128+N
    while Popen reports -N."""
    if rc > 128 and r.rc == -(rc - 128):
        note(f"blectl {r.argv[0]}: died by signal {rc - 128} (shell status {rc})")
        return
    if r.rc != rc:
        raise Failed(f"exit status {r.rc}, expected {rc}: {r}")


def together(*argv, count=2, timeout=90):
    """Start `count` blectl with the same arguments at once; -> [Run] when all have ended."""
    t = time.monotonic()
    procs = [subprocess.Popen([args.blectl, *argv], env=env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(count)]
    runs = []
    for p in procs:
        out, err = p.communicate(timeout=timeout)
        runs.append(Run(argv, p.returncode, out, err, time.monotonic() - t))
    if args.verbose:
        for r in runs:
            print("    " + str(r), flush=True)
    return runs


def interrupted(argv, when, sig=signal.SIGINT, timeout=30):
    """Start blectl, call when(proc, t0) until it returns True, send sig; -> Run, t_sig."""
    t0 = time.monotonic()
    p = subprocess.Popen([args.blectl, *argv], env=env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    sent_at = None
    try:
        while time.monotonic() - t0 < timeout:
            if p.poll() is not None:
                break
            if when(p, t0):
                sent_at = time.monotonic() - t0
                p.send_signal(sig)
                break
            time.sleep(0.02)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    r = Run(argv, p.returncode, out, err, time.monotonic() - t0)
    if args.verbose:
        print("    " + str(r), flush=True)
    return r, sent_at


def bus():
    return dbus.bus.BusConnection(args.bus)


def managed_objects():
    b = bus()
    try:
        om = dbus.Interface(b.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")
        return om.GetManagedObjects()
    finally:
        b.close()


def device_path(address):
    return "/org/bluez/hci0/dev_" + address.replace(":", "_")


def adapter_props():
    return dict(managed_objects()["/org/bluez/hci0"]["org.bluez.Adapter1"])


def connected_devices(objects=None):
    objects = objects or managed_objects()
    return [str(ifs["org.bluez.Device1"]["Address"]) for ifs in objects.values()
            if "org.bluez.Device1" in ifs and bool(ifs["org.bluez.Device1"].get("Connected"))]


def device_prop(address, name):
    ifs = managed_objects().get(dbus.ObjectPath(device_path(address)), {})
    return ifs.get("org.bluez.Device1", {}).get(name)


def wait_until(cond, timeout, what):
    t = time.monotonic()
    while True:
        v = cond()
        if v:
            return time.monotonic() - t
        if time.monotonic() - t > timeout:
            raise Failed(f"{what} not true after {timeout} s")
        time.sleep(0.05)


def kernel_connections():
    """'btmgmt con' inside the VM: the kernel's LE/ACL links (lines with an address)."""
    if not args.ctl:
        return None
    status, out = ctl.command(args.ctl, "con")
    eq(status, 0, f"btmgmt con status ({out})")
    return [line for line in out.splitlines() if "type" in line and ":" in line]


def assert_idle(after, link_timeout=6.0):
    """No device connected (D-Bus and kernel) and no discovery running."""
    dt = wait_until(lambda: not connected_devices(), link_timeout, f"no Connected device after {after}")
    if dt > 0.1:
        note(f"after {after}: Connected went false {dt:.2f} s after blectl exited")
    wait_until(lambda: not bool(adapter_props()["Discovering"]), 3.0, f"Discovering false after {after}")
    conns = kernel_connections()
    if conns is not None:
        t = time.monotonic()
        while conns and time.monotonic() - t < 5:
            time.sleep(0.3)
            conns = kernel_connections()
        eq(conns, [], f"kernel connections (btmgmt con) after {after}")


class RigError(Exception):
    pass


def host_sees_peripheral(timeout=15.0):
    """A short D-Bus discovery until bluetoothd reports an advertisement from PERIPHERAL
    (Device1.RSSI: bluetoothd drops it when a discovery ends); -> seconds."""
    b = bus()
    try:
        adapter = dbus.Interface(b.get_object("org.bluez", "/org/bluez/hci0"), "org.bluez.Adapter1")
        om = dbus.Interface(b.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager")

        def rssi():
            ifs = om.GetManagedObjects().get(dbus.ObjectPath(device_path(PERIPHERAL)), {})
            return ifs.get("org.bluez.Device1", {}).get("RSSI")

        if rssi() is not None:
            note(f"fixture: {PERIPHERAL} had an RSSI before the check scan")
        adapter.StartDiscovery()
        try:
            t = time.monotonic()
            while rssi() is None:
                if time.monotonic() - t > timeout:
                    raise RigError(f"fixture: the host did not see {PERIPHERAL} advertising "
                                   f"within {timeout} s")
                time.sleep(0.1)
            return time.monotonic() - t
        finally:
            adapter.StopDiscovery()
    finally:
        b.close()  # bluetoothd ends a discovery when its client leaves, in any case


def wait_for_command_channel(timeout=60.0):
    """The VM's init opens its command channel (ttyS1) only once bluetoothd is up, and a
    serial port that nobody has open drops what it receives: a command sent in between is
    lost (seen once: the first fixture timed out). Ping until the channel answers."""
    t = time.monotonic()
    while True:
        try:
            status, out = ctl.command(args.ctl, "ping", timeout=3)
            if status == 0 and "pong" in out:
                return time.monotonic() - t
        except (TimeoutError, OSError):
            pass
        if time.monotonic() - t > timeout:
            raise RigError(f"the VM's command channel did not answer a ping within {timeout} s")


def fixture(before):
    """Start the next test from a clean world. Linux 6.1 sometimes leaves a link the host
    does not know after a cancelled LE connection (README: fixture repair): bumble drops
    it from the peripheral side and advertises again, a kernel hci_conn that bluetoothd
    never heard of is flushed by a power cycle of hci0, then the host must see the
    peripheral advertising before the test runs. Logged as a note when it repaired."""
    if not args.ctl:
        return
    command = "fixture" if os.environ.get("REALBLUEZ_FIXTURE_POWER_CYCLE", "1") != "0" else "fixture no-power-cycle"
    status, out = ctl.command(args.ctl, command, timeout=60)
    lines = [line for line in out.splitlines() if line.strip()]
    if status != 0 or not lines or not (lines[0] == "clean" or lines[0].startswith(("repaired: ", "observed: "))):
        raise RigError(f"fixture command: status {status}: {out[-1500:]}")
    if lines[0] == "clean":
        return
    if lines[0].startswith("observed: "):
        note(f"fixture before {before}: {lines[0]}")
        return
    repairs.append((before, lines[0]))
    wait_until(lambda: bool(adapter_props()["Powered"]), 15.0, "hci0 Powered after the fixture")
    dt = host_sees_peripheral()
    wait_until(lambda: not bool(adapter_props()["Discovering"]), 5.0, "Discovering false after the fixture scan")
    note(f"fixture repair #{len(repairs)} before {before}: {lines[0][len('repaired: '):]}; "
         f"host saw {PERIPHERAL} advertising {dt:.2f} s into a check scan")
    if args.verbose:
        print("      " + "\n      ".join(lines[1:]), flush=True)


def check_scan_entry(d, after_connect=False):
    eq(sorted(d), sorted(SCAN_FIELDS), "scan JSON fields")
    eq(d["name"], "blesim Real", "name")
    eq(d["address_type"], "random", "address_type")
    check(isinstance(d["rssi"], int) and -127 <= d["rssi"] <= 20, f"rssi is a dBm integer: {d['rssi']!r}")
    eq(d["tx_power"], 4, "tx_power")
    if after_connect:
        # blectl prints Device1.UUIDs as bluetoothd reports it. BlueZ 5.66 (src/device.c,
        # dev_property_get_uuids) lists the resolved GATT services once a connection has
        # resolved them (kept after the disconnection with the default Cache=always), the
        # advertised ones for a device object created by an advertisement, and none after
        # a connection that ended during service discovery (device_svc_resolved marks the
        # services resolved anyway; sim fault uuids_lost_after_failed_resolution).
        resolved = ["1800", "1801", "180a", "180f", VENDOR[1]]
        states = {"advertised": ["180a", "180f"], "resolved": resolved, "lost": []}
        state = next((k for k, v in states.items() if sorted(d["uuids"]) == v), None)
        check(state is not None, f"uuids after a connection: one of {states}: {d['uuids']}")
        note(f"scan after connections: uuids {d['uuids']} ({state})")
    else:
        eq(sorted(d["uuids"]), ["180a", "180f"], "uuids")
    eq(d["manufacturer_data"], {"05f1": "0102"}, "manufacturer_data")
    eq(d["company"], {"05f1": "The Linux Foundation"}, "company")
    eq(d["service_data"], {}, "service_data")
    eq(d["service_names"], {u: SIG_NAMES[u] for u in d["uuids"] if u in SIG_NAMES}, "service_names")
    # Manufacturer data 0x05F1 is no beacon format: nothing decoded.
    eq(d["decoded"], {}, "decoded")
    eq(d["appearance"], None, "appearance (the peripheral advertises none)")
    check(isinstance(d["time"], str) and len(d["time"]) == 24 and d["time"].endswith("Z"),
          f"time is RFC 3339 UTC with milliseconds: {d['time']!r}")
    eq(d["connected"], False, "connected")
    eq(d["adapter"], "hci0", "adapter")
    # A scan's line is a sighting: last_seen is its time; first_seen no later.
    eq(d["last_seen"], d["time"], "last_seen is the line's time")
    check(isinstance(d["first_seen"], str) and d["first_seen"] <= d["time"], f"first_seen no later than time: {d['first_seen']!r}")


def flags_by_uuid(services):
    return {(s["uuid"], c["uuid"]): (sorted(c["flags"]), sorted(x["uuid"] for x in c["descriptors"]))
            for s in services for c in s["characteristics"]}


bluetoothd_args = None  # as restarted by restart_bluetoothd; None: as booted


def restart_bluetoothd(*argv):
    global bluetoothd_args
    check(args.ctl, "--ctl needed to restart bluetoothd")
    t = time.monotonic()
    status, out = ctl.command(args.ctl, " ".join(["restart-bluetoothd", *argv]), timeout=60)
    eq(status, 0, f"restart-bluetoothd {' '.join(argv)}: {out}")
    wait_until(lambda: bool(adapter_props()["Powered"]), 30, "hci0 powered after restart")
    bluetoothd_args = " ".join(argv)
    note(f"bluetoothd restarted {' '.join(argv) or '(default plugins)'} in {time.monotonic() - t:.2f} s")


VENDOR_SERVICE, VENDOR_WRITE, VENDOR_NOTIFY = VENDOR[1], VENDOR[3], VENDOR[5]
