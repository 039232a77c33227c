#!/usr/bin/python3
"""blectl acceptance tests against a real bluetoothd (the realbluez VM), run on the host.

Usage: /usr/bin/python3 realbluez/acceptance.py --blectl BIN --bus tcp:host=127.0.0.1,port=N
                                               [--ctl SOCKET] [-k SUBSTRING] [-v]
Needs python3-dbus (Debian's /usr/bin/python3). realbluez/run boots the VM and calls this.
The VM world is realbluez/peripheral.py: "blesim Real" at F0:5E:A1:00:00:01 (random).
Each test asserts exact values and exit statuses; the summary lists every check.
Exits 0 when all tests pass, 1 otherwise.
"""
import argparse
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
MISSING = "C0:FF:EE:DE:AD:00"
VENDOR = [
    "--vendor-service", "5a1e0001-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
    "--vendor-write", "5a1e0002-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
    "--vendor-notify", "5a1e0003-6c2d-4b8e-9f3a-0c1d2e3f4a5b",
]
SCAN_FIELDS = ["address", "address_type", "name", "rssi", "tx_power", "appearance", "uuids",
               "manufacturer_data", "company", "service_data", "service_names", "connected", "adapter", "time"]
# The Bluetooth SIG's names (Sources/BlueZKit/AssignedNumbers+Tables.swift).
SIG_NAMES = {"1800": "GAP", "1801": "GATT", "180a": "Device Information", "180f": "Battery"}

args = None
results = []   # (test, ok, detail)
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


def check(cond, what):
    if not cond:
        raise Failed(what)


def eq(actual, expected, what):
    if actual != expected:
        raise Failed(f"{what}: expected {expected!r}, got {actual!r}")


# --- running blectl -----------------------------------------------------------------

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


# --- D-Bus view of the real bluetoothd ----------------------------------------------

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


# --- between tests: a clean fixture ---------------------------------------------------

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


# --- the tests ----------------------------------------------------------------------

def test_adapter():
    a = adapter_props()
    eq(bool(a["Powered"]), True, "hci0 Powered")
    eq(str(a["Address"]), "00:1A:7D:DA:71:13", "hci0 Address (bumble's public address)")
    eq(bool(a["Discovering"]), False, "Discovering at start")


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
    eq(d["appearance"], None, "appearance (the peripheral advertises none)")
    check(isinstance(d["time"], str) and len(d["time"]) == 24 and d["time"].endswith("Z"),
          f"time is RFC 3339 UTC with milliseconds: {d['time']!r}")
    eq(d["connected"], False, "connected")
    eq(d["adapter"], "hci0", "adapter")


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


def flags_by_uuid(services):
    return {(s["uuid"], c["uuid"]): (sorted(c["flags"]), sorted(x["uuid"] for x in c["descriptors"]))
            for s in services for c in s["characteristics"]}


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
    eq(sorted(c for s, c in f if s == "180a"), ["2a24", "2a26", "2a29"], "0x180A characteristics")
    eq(f[(vs, vw)], (["write", "write-without-response"], []), "vendor write flags")
    eq(f[(vn, vn)] if (vn, vn) in f else f[(vs, vn)], (["notify"], ["2902"]), "vendor notify flags")
    note(f"connect: services {[s['uuid'] for s in d['services']]} in {r.elapsed:.2f} s")
    assert_idle("connect")


def test_battery_default():
    r = blectl("get-battery", PERIPHERAL, "--timeout", "30")
    expect_rc(r, 0)
    d = r.json()
    eq(d["percentage"], 73, "percentage")
    eq(d["address"], PERIPHERAL, "address")
    objects = managed_objects()
    has_b1 = "org.bluez.Battery1" in objects.get(dbus.ObjectPath(device_path(PERIPHERAL)), {})
    note(f"default plugins: get-battery source {d['source']!r}; Battery1 on the device after exit: {has_b1}")
    eq(d["source"], "battery1", "source with bluetoothd's battery plugin")
    assert_idle("get-battery")


def test_version():
    r = blectl("get-version", PERIPHERAL, "--timeout", "30")
    expect_rc(r, 0)
    d = r.json()
    eq(d["address"], PERIPHERAL, "address")
    eq(d["source"], "device_information", "source")
    eq(d["firmware_revision"], "3.1.4", "firmware_revision")
    eq(d.get("manufacturer_name"), "Bumble Labs", "manufacturer_name")
    eq(d.get("model_number"), "Real-1", "model_number")
    assert_idle("get-version")


def test_version_vendor():
    r = blectl("get-version", PERIPHERAL, "--timeout", "30", *VENDOR)
    expect_rc(r, 0)
    d = r.json()
    eq(d["source"], "vendor", "source")
    eq(d["firmware_revision"], "3.1.4", "firmware_revision")
    assert_idle("get-version --vendor-*")


def test_battery_vendor():
    r = blectl("get-battery", PERIPHERAL, "--timeout", "30", *VENDOR)
    expect_rc(r, 0)
    d = r.json()
    eq((d["percentage"], d["source"]), (73, "vendor"), "percentage, source")
    assert_idle("get-battery --vendor-*")


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


def test_two_connects_at_once():
    """Two get-battery started together: bluetoothd answers the second Connect Failed
    "Operation already in progress" (EALREADY). Each ends with 73 or exit 5 busy naming the
    connect; at least one reads; nothing is left."""
    runs = together("get-battery", PERIPHERAL, "--timeout", "30")
    for r in runs:
        if r.rc == 0:
            eq(r.json()["percentage"], 73, f"percentage ({r})")
        else:
            expect_rc(r, 5)
            e = json.loads(r.err.strip().splitlines()[-1])["error"]
            eq((e["code"], e["operation"], e["dbus_error"]), ("busy", "connect", "org.bluez.Error.Failed"),
               f"busy error ({r})")
    check(any(r.rc == 0 for r in runs), f"at least one of two get-battery read: {[str(r) for r in runs]}")
    note(f"two get-battery at once: exits {[r.rc for r in runs]}")
    assert_idle("two get-battery at once")


def test_bluetoothd_restart_during_connect():
    """bluetoothd restarted as soon as the link is up in get-version, while the services
    are being resolved (it drops the link, then leaves the bus): exit 69 unavailable, not 4
    disconnected; nothing left afterwards. A fresh bluetoothd first, so that resolving the
    services takes a GATT discovery (a daemon that has resolved them before is too quick)."""
    restart_bluetoothd()
    p = subprocess.Popen([args.blectl, "get-version", PERIPHERAL, "--timeout", "30"], env=env(),
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


def test_battery_noplugin():
    restart_bluetoothd("--noplugin=battery")
    r = blectl("get-battery", PERIPHERAL, "--timeout", "30")
    expect_rc(r, 0)
    d = r.json()
    eq((d["percentage"], d["source"]), (73, "gatt"), "percentage, source without the battery plugin")
    objects = managed_objects()
    check("org.bluez.Battery1" not in objects.get(dbus.ObjectPath(device_path(PERIPHERAL)), {}),
          "no Battery1 with --noplugin=battery")
    assert_idle("get-battery --noplugin=battery")


def test_connect_noplugin():
    r = blectl("connect", PERIPHERAL, "--timeout", "30")
    expect_rc(r, 0)
    services = [s["uuid"] for s in r.json()["services"]]
    check("180f" in services, f"180f exported without the battery plugin: {services}")
    assert_idle("connect --noplugin=battery")


# --- the GATT toolbox: read, write, request, disconnect, info, devices, adapters, pair ---

VENDOR_SERVICE, VENDOR_WRITE, VENDOR_NOTIFY = VENDOR[1], VENDOR[3], VENDOR[5]
ERROR_KEYS = ["code", "exit_status", "message", "operation", "address", "service", "characteristic", "dbus_error"]
INFO_KEYS = ["address", "address_type", "name", "alias", "paired", "bonded", "trusted", "blocked", "connected",
             "services_resolved", "rssi", "tx_power", "appearance", "icon", "class", "modalias", "uuids",
             "manufacturer_data", "service_data", "battery_percentage", "adapter"]
# Device1.UUIDs once bluetoothd has resolved the services (1800 is there although the gap
# plugin claims the GAP service, so that no GattService1 is exported for it).
RESOLVED_UUIDS = ["1800", "1801", "180a", "180f", VENDOR_SERVICE]


def error_of(r):
    """The one JSON error object blectl wrote on stderr, with its keys in order checked."""
    lines = [line for line in r.err.splitlines() if line.strip()]
    eq(len(lines), 1, f"stderr lines of {r}")
    err = json.loads(lines[0])["error"]
    eq(list(err), ERROR_KEYS, f"error keys ({r})")
    return err


def expect_error(r, rc, code, message, operation=None, service=None, characteristic=None, dbus_error=None,
                 address=PERIPHERAL):
    expect_rc(r, rc)
    eq(r.out, "", f"stdout of a failed {r.argv[0]}")
    eq(error_of(r), {"code": code, "exit_status": rc, "message": message, "operation": operation, "address": address,
                     "service": service, "characteristic": characteristic, "dbus_error": dbus_error},
       f"error object ({r})")


def expect_ok(r):
    expect_rc(r, 0)
    eq(r.err, "", f"stderr of {' '.join(r.argv)}")


def read_record(characteristic, service, value, text, descriptor=None):
    return {"address": PERIPHERAL, "service": service, "characteristic": characteristic, "descriptor": descriptor,
            "value": value, "text": text}


def peripheral_counters():
    """bumble's own count of what blesim Real received (peripheral.py, `state`):
    -> (vendor commands [hex, ...] in order, pairings completed)."""
    check(args.ctl, "--ctl needed for the peripheral's counters")
    status, out = ctl.command(args.ctl, "bumble-state", timeout=30)
    eq(status, 0, f"bumble-state: {out}")
    line = next((l for l in out.splitlines() if l.startswith("blesim Real received:")), None)
    check(line is not None, f"counters in bumble-state: {out}")
    fields = dict(part.strip().split(" ", 1) for part in line[len("blesim Real received:"):].split(";"))
    commands = fields["commands"].split()[1:]  # "N a b c"
    eq(len(commands), int(fields["commands"].split()[0]), f"command count in {line!r}")
    return commands, int(fields["pairings"])


def known(address=PERIPHERAL):
    return dbus.ObjectPath(device_path(address)) in managed_objects()


def remove_device(address=PERIPHERAL):
    """Adapter1.RemoveDevice from this script (pairing, keys and the GATT cache go with it)."""
    if not known(address):
        return False
    b = bus()
    try:
        adapter = dbus.Interface(b.get_object("org.bluez", "/org/bluez/hci0"), "org.bluez.Adapter1")
        adapter.RemoveDevice(dbus.ObjectPath(device_path(address)), timeout=15)
    finally:
        b.close()
    wait_until(lambda: not known(address), 5.0, f"{address} gone after RemoveDevice")
    return True


class HeldLink:
    """A link another client holds: Device1.Connect called by this script (as bluetoothctl
    connect would), waited for until ServicesResolved and, with the battery plugin, Battery1
    (which the plugin registers after reading 0x2A19, right before it subscribes to it).
    On exit, Device1.Disconnect if the link is still up."""

    def __init__(self, battery1=True):
        self.battery1 = battery1

    def __enter__(self):
        if not known():
            host_sees_peripheral()
            wait_until(lambda: not bool(adapter_props()["Discovering"]), 5.0, "Discovering false after the check scan")
        b = bus()
        try:
            device = dbus.Interface(b.get_object("org.bluez", device_path(PERIPHERAL)), "org.bluez.Device1")
            t = time.monotonic()
            device.Connect(timeout=30)
            self.connect_s = time.monotonic() - t
        finally:
            b.close()
        wait_until(lambda: bool(device_prop(PERIPHERAL, "ServicesResolved")), 20.0, "ServicesResolved (held link)")
        if self.battery1:
            wait_until(lambda: "org.bluez.Battery1" in managed_objects().get(dbus.ObjectPath(device_path(PERIPHERAL)), {}),
                       5.0, "Battery1 (held link)")
            time.sleep(1.0)  # the battery plugin's CCC write follows Battery1
        return self

    def __exit__(self, *exc):
        try:
            if known() and bool(device_prop(PERIPHERAL, "Connected")):
                b = bus()
                try:
                    dbus.Interface(b.get_object("org.bluez", device_path(PERIPHERAL)),
                                   "org.bluez.Device1").Disconnect(timeout=15)
                finally:
                    b.close()
        except dbus.DBusException as e:
            note(f"held link: Disconnect on exit: {e}")
        return False


def connected_now():
    return known() and bool(device_prop(PERIPHERAL, "Connected"))


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


def info_record(**changes):
    """blesim Real as info prints it when BlueZ knows it from advertisements only."""
    record = {"address": PERIPHERAL, "address_type": "random", "name": "blesim Real", "alias": "blesim Real",
              "paired": False, "bonded": False, "trusted": False, "blocked": False, "connected": False,
              "services_resolved": False, "rssi": None, "tx_power": None, "appearance": None, "icon": None,
              "class": None, "modalias": None, "uuids": ["180f", "180a"], "manufacturer_data": {"05f1": "0102"},
              "service_data": {}, "battery_percentage": None, "adapter": "hci0"}
    record.update(changes)
    return record


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


def test_read_battery():
    r = blectl("read", PERIPHERAL, "2a19", "--timeout", "30")
    expect_ok(r)
    eq(r.json(), read_record("2a19", "180f", "49", "I"), "read 2a19")
    eq(list(r.json()), ["address", "service", "characteristic", "descriptor", "value", "text"], "read keys in order")
    assert_idle("read 2a19")


def test_read_device_information():
    r = blectl("read", PERIPHERAL, "2a26", "--timeout", "30")
    expect_ok(r)
    eq(r.json(), read_record("2a26", "180a", "332e312e34", "3.1.4"), "read 2a26")
    assert_idle("read 2a26")
    t = blectl("read", PERIPHERAL, "2a29", "--format", "text", "--timeout", "30")
    expect_ok(t)
    eq(squeezed(t.out), [
        f"address: {PERIPHERAL}", "service: 180a (Device Information)",
        "characteristic: 2a29 (Manufacturer Name String)", "descriptor: -",
        "value: " + b"Bumble Labs".hex(), 'text: "Bumble Labs"',
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


def test_read_refused():
    """Refused before anything is read (exit 3): the Device Name 0x2A00 (the device has it,
    but bluetoothd's gap plugin claims the GAP service and exports no GattService1 for it),
    a descriptor the characteristic lacks, a characteristic without the read flag (the
    flags in bluetoothd's order)."""
    gap = blectl("read", PERIPHERAL, "2a00", "--timeout", "30")
    expect_error(gap, 3, "not_supported", f"not supported by the device: no characteristic 2a00 (Device Name) on {PERIPHERAL}",
                 operation="service_lookup", characteristic="2a00")
    assert_idle("read 2a00")
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


def write_record(length, kind):
    return {"address": PERIPHERAL, "service": VENDOR_SERVICE, "characteristic": VENDOR_WRITE, "length": length, "type": kind}


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
    eq(back.json(), read_record("2a19", "180f", "49", "I"), "2a19 read back unchanged")
    assert_idle("read after the refused writes")


def request_argv(value, *rest):
    return ["request", PERIPHERAL, value, "--write", VENDOR_WRITE, "--notify", VENDOR_NOTIFY, "--timeout", "30", *rest]


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


# --- notify, and what follows a failed command -----------------------------------------

NOTIFY_KEYS = ["address", "service", "characteristic", "value", "text", "seq", "time", "connection"]


def bumble(command, timeout=60):
    """A control-port command of peripheral.py (through the init's `bumble`) -> answer lines."""
    check(args.ctl, "--ctl needed for the peripheral's control port")
    status, out = ctl.command(args.ctl, "bumble " + command, timeout=timeout)
    eq(status, 0, f"bumble {command}: {out}")
    return [line for line in out.splitlines() if line.strip()]


def notify_values(count, first, timeout=20.0):
    """blesim Real notifies first..first+count-1 (4 bytes big-endian each) on the vendor
    notify characteristic, once a link has subscribed (its CCC enabled): asked again until
    then; nothing is sent to nobody."""
    t = time.monotonic()
    while True:
        answer = bumble(f"notify {count} {first}")[0]
        if answer.startswith(f"notified {count} "):
            eq(answer, f"notified {count} ({first}..{first + count - 1}) on 1 link(s)", "bumble notify")
            return time.monotonic() - t
        check(answer.startswith("notified 0: "), f"bumble notify: {answer}")
        if time.monotonic() - t > timeout:
            raise Failed(f"no link subscribed to {VENDOR_NOTIFY} within {timeout} s")
        time.sleep(0.1)


class Background:
    """blectl running on the host, its output read as it comes."""

    def __init__(self, *argv):
        self.argv = argv
        self.t0 = time.monotonic()
        self.p = subprocess.Popen([args.blectl, *argv], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        self.out, self.err = [], []
        self.readers = [threading.Thread(target=self._read, args=(f, lines), daemon=True)
                        for f, lines in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for r in self.readers:
            r.start()

    @staticmethod
    def _read(f, lines):
        for line in f:
            lines.append(line)

    def wait_lines(self, n, timeout=30.0):
        wait_until(lambda: len(self.out) >= n or self.p.poll() is not None, timeout, f"{n} lines from {self.argv[0]}")
        check(len(self.out) >= n, f"blectl {self.argv[0]} ended after {len(self.out)} lines: {''.join(self.err)[-600:]}")

    def wait_stderr(self, text, timeout=30.0):
        wait_until(lambda: text in "".join(self.err) or self.p.poll() is not None, timeout, f"{text!r} on stderr")
        check(text in "".join(self.err), f"blectl {self.argv[0]} ended without {text!r}: {''.join(self.err)[-800:]}")

    def finish(self, timeout=60.0):
        try:
            self.p.wait(timeout=timeout)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
        for r in self.readers:
            r.join(5)
        r = Run(self.argv, self.p.returncode, "".join(self.out), "".join(self.err), time.monotonic() - self.t0)
        if args.verbose:
            print("    " + str(r), flush=True)
        return r


def expect_notify_records(r, values, connections):
    """Every stdout line a value record of the vendor notify characteristic, keys in order,
    seq 1..n, exactly these values (4-byte big-endian integers) and link numbers."""
    lines = [line for line in r.out.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    for record in records:
        eq(list(record), NOTIFY_KEYS, "keys of a notify record")
    eq([x["seq"] for x in records], list(range(1, len(values) + 1)), "seq")
    eq([x["value"] for x in records], [f"{v:08x}" for v in values], "values, in order")
    eq([x["connection"] for x in records], connections, "connection of each value")
    eq({(x["address"], x["service"], x["characteristic"], x["text"]) for x in records},
       {(PERIPHERAL, VENDOR_SERVICE, VENDOR_NOTIFY, None)} if records else set(), "address, service, characteristic, text")
    for x in records:
        check(len(x["time"]) == 24 and x["time"].endswith("Z") and x["time"][19] == ".", f"time RFC 3339 ms: {x['time']}")


def assert_no_notify_session(after):
    """No link (assert_idle), and bluetoothd has no notification session on the vendor
    notify characteristic (Notifying false where it is still exported)."""
    assert_idle(after)
    for path, ifs in managed_objects().items():
        c = ifs.get("org.bluez.GattCharacteristic1")
        if c and str(path).startswith(device_path(PERIPHERAL)) and str(c["UUID"]) == VENDOR_NOTIFY:
            eq(bool(c.get("Notifying", False)), False, f"Notifying of {VENDOR_NOTIFY} after {after}")


def notify_argv(*rest):
    return ["notify", PERIPHERAL, VENDOR_NOTIFY, *rest]


def test_notify_count():
    """--count 20: exactly 20 lines, seq 1..20, the values in the order bumble sent them;
    then StopNotify and the link closed."""
    n = Background(*notify_argv("--count", "20", "--timeout", "60"))
    notify_values(20, 1)
    r = n.finish()
    expect_ok(r)
    expect_notify_records(r, list(range(1, 21)), [1] * 20)
    assert_no_notify_session("notify --count 20")


def test_notify_timeout():
    """--timeout reached: 0 with the values received; --count 10 not reached in time: 124
    naming the notifications, after the values received."""
    n = Background(*notify_argv("--timeout", "6"))
    notify_values(3, 1)
    r = n.finish()
    expect_ok(r)
    expect_notify_records(r, [1, 2, 3], [1, 1, 1])
    check(5.8 <= r.elapsed <= 9.0, f"ends at its 6 s timeout (took {r.elapsed:.2f} s)")
    assert_no_notify_session("notify --timeout 6")
    c = Background(*notify_argv("--count", "10", "--timeout", "6"))
    notify_values(4, 1)
    r = c.finish()
    expect_rc(r, 124)
    expect_notify_records(r, [1, 2, 3, 4], [1] * 4)
    eq(error_of(r), {"code": "timed_out", "exit_status": 124,
                     "message": f"timed out waiting for notifications of characteristic {VENDOR_NOTIFY} in service {VENDOR_SERVICE} "
                                f"on {PERIPHERAL}",
                     "operation": "notifications", "address": PERIPHERAL, "service": VENDOR_SERVICE,
                     "characteristic": VENDOR_NOTIFY, "dbus_error": None}, "error of notify --count 10 --timeout 6")
    assert_no_notify_session("notify --count 10 --timeout 6")


def test_notify_link_drop():
    """The peripheral drops the link (bumble disconnects): a plain notify ends 4 after the
    values received, with its error object; its session (kept by bluetoothd over the loss)
    stopped, no link."""
    n = Background(*notify_argv("--timeout", "60"))
    notify_values(5, 1)
    n.wait_lines(5)
    eq(bumble("drop"), ["dropped 1 link(s)"], "bumble drop")
    r = n.finish()
    expect_rc(r, 4)
    expect_notify_records(r, [1, 2, 3, 4, 5], [1] * 5)
    eq(error_of(r), {"code": "disconnected", "exit_status": 4,
                     "message": f"disconnected during notifications of characteristic {VENDOR_NOTIFY} in service "
                                f"{VENDOR_SERVICE} on {PERIPHERAL}",
                     "operation": "notifications", "address": PERIPHERAL, "service": VENDOR_SERVICE,
                     "characteristic": VENDOR_NOTIFY, "dbus_error": None}, "error of notify after the link drop")
    assert_no_notify_session("notify and a link drop")


def test_notify_reconnect():
    """--reconnect across 3 link drops forced by the peripheral: the values sent on each of
    the 4 links arrive, in order, seq 1..80, tagged with links 1..4; each loss and
    reconnection on stderr; at --count 80 exit 0, no link, no session."""
    per_link = 20
    n = Background(*notify_argv("--reconnect", "--count", str(4 * per_link), "--timeout", "150"))
    for link in range(1, 5):
        notify_values(per_link, (link - 1) * per_link + 1)
        n.wait_lines(link * per_link)
        if link == 4:
            break
        eq(bumble("drop"), ["dropped 1 link(s)"], f"bumble drop of link {link}")
        n.wait_stderr(f'"event":"link_lost","address":"{PERIPHERAL}","connection":{link}}}')
        n.wait_stderr(f'"event":"reconnected","address":"{PERIPHERAL}","connection":{link + 1}}}', timeout=60)
    r = n.finish()
    expect_rc(r, 0)
    expect_notify_records(r, list(range(1, 4 * per_link + 1)), [k for k in range(1, 5) for _ in range(per_link)])
    events = [json.loads(line) for line in r.err.splitlines() if line.strip()]
    eq([(e["event"], e["connection"]) for e in events if e["event"] != "reconnect_failed"],
       [("link_lost", 1), ("reconnected", 2), ("link_lost", 2), ("reconnected", 3), ("link_lost", 3), ("reconnected", 4)],
       "link losses and reconnections on stderr")
    failed = [e for e in events if e["event"] == "reconnect_failed"]
    if failed:
        note(f"notify --reconnect: {len(failed)} reconnection attempt(s) failed and were retried: "
             f"{'; '.join(e['message'] for e in failed)[:400]}")
    assert_no_notify_session("notify --reconnect")


def fail_then(what):
    """A command that fails after connecting (read of 2a00, exit 3), then at once what():
    -> (whether the link was still up when what() started, what() returns)."""
    first = blectl("read", PERIPHERAL, "2a00", "--timeout", "30")
    expect_rc(first, 3)
    linked = connected_now()
    return linked, what()


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


BACK_TO_BACK_RUNS = 20


def test_back_to_back():
    """get-battery BACK_TO_BACK_RUNS times in a row on one device: each prints its result and
    exits without waiting for BlueZ's answer to its Disconnect, so the next finds the link
    still up (bluetoothd's 2 s disconnect timer) and reads over it, or, once the timer has
    fired, connects anew; every result correct, nothing left once the timer has run. The
    first command's result comes before its link went down: the link is still up when it
    has exited."""
    found_up, sources = 0, {}
    for i in range(BACK_TO_BACK_RUNS):
        linked = connected_now()
        found_up += linked
        r = blectl("get-battery", PERIPHERAL, "--timeout", "30")
        expect_rc(r, 0)
        d = r.json()
        # battery1, or gatt when Battery1 was not there (yet) on the link the command used
        # (seen on bluetoothd 5.66 in a loop: the timer fired and the command connected anew).
        eq((d["address"], d["percentage"]), (PERIPHERAL, 73), f"get-battery {i + 1}")
        sources[d["source"]] = sources.get(d["source"], 0) + 1
        check(d["source"] in ("battery1", "gatt"), f"get-battery {i + 1}: source {d['source']!r}")
        if i == 0:
            eq(connected_now(), True, "the link right after the first get-battery exited (result before the link went down)")
    note(f"back to back: {found_up} of {BACK_TO_BACK_RUNS} get-battery found the link up; sources {sources}")
    assert_idle("back-to-back get-battery")


def test_notify_after_failure():
    """notify --count right after a failed command: subscribed on a link of its own,
    exactly the values sent, nothing left."""
    def run():
        n = Background(*notify_argv("--count", "5", "--timeout", "60"))
        notify_values(5, 1)
        return n.finish()
    linked, r = fail_then(run)
    expect_ok(r)
    expect_notify_records(r, [1, 2, 3, 4, 5], [1] * 5)
    if not linked:
        note("notify after a failure: the failed command's link was already down (nothing to test this time)")
    assert_no_notify_session("notify after a failed command")


# --- blectl inside the VM (fd passing needs the VM's Unix socket bus) ------------------

def vm_blectl(*argv, files=None, stdin=None, timeout=60):
    """blectl run inside the VM on its own system bus (vmexec.py): -> Run."""
    check(args.ctl, "--ctl needed to run blectl in the VM")
    spec = {"argv": list(argv), "timeout": timeout,
            "files": {path: base64.b64encode(data).decode() for path, data in (files or {}).items()},
            "stdin": base64.b64encode(stdin).decode() if stdin is not None else None}
    status, out = ctl.command(args.ctl, "blectl-exec " + base64.b64encode(json.dumps(spec).encode()).decode(),
                              timeout=timeout + 30)
    eq(status, 0, f"blectl-exec: {out[-600:]}")
    result = json.loads(out.strip().splitlines()[-1])
    r = Run(argv, result["status"], result["stdout"], result["stderr"], result["seconds"])
    if args.verbose:
        print("    (in the VM) " + str(r), flush=True)
    eq(r.rc == 127 and "not in this VM" in r.err, False, f"blectl in the VM: {r.err.strip()}")
    return r


def stream_received():
    """bumble's record of what reached the vendor write characteristic since reset-stream."""
    line = bumble("stream")[0]
    fields = dict(part.strip().split(" ", 1) for part in line.split(";"))
    return {"bytes": int(fields["bytes"]), "packets": int(fields["packets"]), "largest": int(fields["largest"]),
            "sha256": fields["sha256"], "mtu": fields["mtu"]}


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


def test_read_descriptor_noplugin():
    """Without the battery plugin nobody subscribes to 2a19: its CCC is 00 00."""
    if bluetoothd_args != "--noplugin=battery":  # run on its own (-k)
        restart_bluetoothd("--noplugin=battery")
    with HeldLink(battery1=False):
        r = blectl("read", PERIPHERAL, "2a19", "--descriptor", "2902", "--timeout", "30")
        expect_ok(r)
        eq(r.json(), read_record("2a19", "180f", "0000", None, descriptor="2902"), "2a19's CCC without the battery plugin")
    assert_idle("read --descriptor 2902 --noplugin=battery")



TESTS = [
    test_adapter, test_scan, test_second_scan, test_two_scans_at_once, test_connect, test_battery_default,
    test_version, test_version_vendor, test_battery_vendor, test_missing_device,
    test_sigint_connect_early, test_sigint_connect_linked, test_sigint_scan,
    test_scan_after_interrupt, test_sigterm_scan, test_two_connects_at_once,
    # The GATT toolbox (test_info removes blesim Real from bluetoothd first).
    test_adapters, test_info, test_devices, test_read_battery, test_read_device_information, test_read_offset,
    test_read_descriptor, test_read_refused, test_read_unknown_device, test_write_vendor, test_write_refused,
    test_request, test_request_timeout, test_disconnect_held, test_disconnect_not_connected,
    test_unpair_connected, test_pair_unpair,
    test_notify_count, test_notify_timeout, test_notify_link_drop, test_notify_reconnect,
    test_request_after_failure, test_notify_after_failure, test_back_to_back, test_write_file_in_vm,
    test_bluetoothd_restart_during_connect,
    # Last: these restart bluetoothd without the battery plugin.
    test_battery_noplugin, test_connect_noplugin, test_read_descriptor_noplugin,
]


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--blectl", required=True)
    p.add_argument("--bus", required=True)
    p.add_argument("--ctl")
    p.add_argument("-k", action="append", default=[], help="run tests whose name contains this")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--repeat", type=int, default=1, help="run the selected tests this many rounds (flake hunting); bluetoothd is restarted with its default plugins between rounds")
    args = p.parse_args()
    selected = [t for t in TESTS if not args.k or any(k in t.__name__ for k in args.k)]
    rounds = max(1, args.repeat)
    t_all = time.monotonic()
    if args.ctl:
        dt = wait_for_command_channel()
        if dt > 0.5:
            note(f"the command channel answered {dt:.1f} s after hci0 was powered")
    for index in range(rounds * len(selected)):
        t = selected[index % len(selected)]
        if index and index % len(selected) == 0:
            # A new round starts from what a fresh boot has: bluetoothd with its default
            # plugins and no device objects (the earlier round may have left it running
            # --noplugin=battery, and with the peripheral's resolved services cached).
            print(f"=== round {index // len(selected) + 1} of {rounds}", flush=True)
            restart_bluetoothd()
        print(f"--- {t.__name__}", flush=True)
        t0 = time.monotonic()
        try:
            try:
                fixture(t.__name__)
            except Exception as e:
                raise RigError(f"fixture before the test: {e!r}") from e
            t0 = time.monotonic()
            t()
            results.append((t.__name__, True, ""))
            print(f"PASS {t.__name__} ({time.monotonic() - t0:.1f} s)", flush=True)
        except Failed as e:
            results.append((t.__name__, False, str(e)))
            print(f"FAIL {t.__name__}: {e}", flush=True)
        except Exception as e:  # a broken test or rig, not a blectl verdict
            results.append((t.__name__, False, f"error: {e!r}"))
            print(f"ERROR {t.__name__}: {e!r}", flush=True)
            traceback.print_exc()
        if not results[-1][1] and args.ctl:
            try:
                _, log = ctl.command(args.ctl, "log", timeout=10)
                print("    VM log tail:\n      " + "\n      ".join(log.splitlines()[-25:]), flush=True)
            except Exception as e:
                print(f"    (no VM log: {e!r})")
    passed = sum(ok for _, ok, _ in results)
    print(f"\n{passed}/{len(results)} passed in {time.monotonic() - t_all:.0f} s")
    for name, ok, detail in results:
        print(f"  {'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
    if observations:
        print("observations:\n  " + "\n  ".join(observations))
    print(f"fixture repairs: {len(repairs)}" + "".join(f"\n  before {t}: {what}" for t, what in repairs))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
