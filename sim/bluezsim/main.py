"""Entry point: optionally spawn a private dbus-daemon, own org.bluez (one connection)
and org.blectl.Simulator (another), print ADDRESS=..., run until SIGTERM/SIGINT/stdin EOF."""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import dbus
import dbus.bus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

from . import versions
from .faults import parse_assignment, parse_value, FaultError, FAULTS
from .core import Sim
from .control import Control

SIM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pdeathsig():
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def spawn_bus():
    tmp = tempfile.mkdtemp(prefix="blesim-bus-")
    # dbus-daemon's stderr goes to a file (it warns about fd limits when run as root);
    # it is shown only when the daemon fails to start, or always with BLESIM_DEBUG=1.
    err = None if os.environ.get("BLESIM_DEBUG") else open(os.path.join(tmp, "dbus-daemon.log"), "w+")
    proc = subprocess.Popen(
        ["dbus-daemon", "--config-file", os.path.join(SIM_DIR, "bus.conf"), "--print-address",
         "--nofork", "--address", "unix:dir=" + tmp],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, preexec_fn=_pdeathsig)
    line = proc.stdout.readline().decode().strip()
    if not line:
        proc.kill()
        if err is not None:
            err.seek(0)
            sys.stderr.write(err.read())
        shutil.rmtree(tmp, ignore_errors=True)
        raise SystemExit("bluez-sim: dbus-daemon did not print an address")
    return proc, line, tmp


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bluez-sim", description="Simulated BlueZ 5.66 on a private D-Bus")
    ap.add_argument("--spawn-bus", action="store_true", help="start a private dbus-daemon")
    ap.add_argument("--address", help="bus address (default: $DBUS_SYSTEM_BUS_ADDRESS)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="fault / scenario")
    ap.add_argument("--faults", help="JSON object of faults")
    ap.add_argument("--ignore-stdin", action="store_true", help="do not exit when stdin reaches EOF")
    ap.add_argument("--list-faults", action="store_true")
    ap.add_argument("--bluez", default=versions.DEFAULT, metavar="VERSION",
                    help=f"the bluetoothd version to model: {', '.join(versions.SUPPORTED)} (default {versions.DEFAULT})")
    args = ap.parse_args(argv)

    if args.list_faults:
        # A closed stdout (`blectl-sim faults | head -1`): SIGPIPE, as Unix filters end.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        for k, (t, d, h) in FAULTS.items():
            print(f"{k} ({t.__name__}, default {d!r}): {h}")
        return 0

    try:
        versions.parse(args.bluez)
    except versions.VersionError as e:
        print(f"bluez-sim: {e}", file=sys.stderr)
        return 2

    faults = {}
    try:
        if args.faults:
            for k, v in json.loads(args.faults).items():
                faults[k] = parse_value(k, v if isinstance(v, str) else json.dumps(v))
        for a in args.set:
            k, v = parse_assignment(a)
            faults[k] = v
    except (FaultError, ValueError) as e:
        print(f"bluez-sim: {e}", file=sys.stderr)
        return 2

    DBusGMainLoop(set_as_default=True)
    daemon, tmp = None, None
    if args.spawn_bus:
        daemon, address, tmp = spawn_bus()
    else:
        address = args.address or os.environ.get("DBUS_SYSTEM_BUS_ADDRESS")
        if not address:
            print("bluez-sim: no bus: use --spawn-bus, --address or DBUS_SYSTEM_BUS_ADDRESS", file=sys.stderr)
            return 2

    loop = GLib.MainLoop()

    def cleanup():
        if daemon is not None:
            daemon.terminate()
            try:
                daemon.wait(2)
            except subprocess.TimeoutExpired:
                daemon.kill()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    try:
        def bluez_conn():
            c = dbus.bus.BusConnection(address)
            r = c.request_name("org.bluez", dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
            if r not in (dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER, dbus.bus.REQUEST_NAME_REPLY_ALREADY_OWNER):
                raise SystemExit("bluez-sim: org.bluez is already owned on this bus")
            return c

        sim = Sim(faults, bluez=args.bluez)
        sim.bus_pid = daemon.pid if daemon is not None else None
        sim.apply_startup_faults()
        sim.conn_factory = bluez_conn
        sim.attach(bluez_conn())
        ctl = dbus.bus.BusConnection(address)
        r = ctl.request_name("org.blectl.Simulator", dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
        if r != dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER:
            raise SystemExit("bluez-sim: org.blectl.Simulator is already owned on this bus")
        Control(ctl, sim)
        ctl.add_signal_receiver(lambda *a: loop.quit(), "Disconnected", "org.freedesktop.DBus.Local")
    except BaseException:
        cleanup()
        raise

    def quit_(*_):
        loop.quit()
        return False

    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, quit_)
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGINT, quit_)
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGHUP, quit_)

    if not args.ignore_stdin:
        def on_stdin(fd, cond):
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                loop.quit()
                return False
            return True
        try:
            GLib.io_add_watch(sys.stdin.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP | GLib.IO_ERR, on_stdin)
        except Exception:
            pass

    sys.stdout.write(f"ADDRESS={address}\n")
    sys.stdout.flush()
    try:
        loop.run()
    finally:
        sim.resume()        # never leave a client stopped (hold_client_ms)
        cleanup()
    return 0
