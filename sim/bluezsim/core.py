"""The simulator's state container: object tree, timers, faults, clients, call log,
and the reset/build of the world. Components (adapter, discovery, devices, GATT)
hang off it."""

import json
import os
import signal
import time

from gi.repository import GLib
import dbus
import dbus.lowlevel

from .bus import Bus, DBusError, Obj
from .ifaces import ERR, IFACES
from .faults import Faults, FAULTS
from . import world
from .adapter import Adapter, BluezRoot, SecondAdapter
from .discovery import Discovery
from .device import Device
from .acquire import EchoStats
from .pairing import Agents

ADAPTER_PATH = "/org/bluez/hci0"


def fresh_rate_stats():
    """notify_rate_hz's totals: notifications sent, in how many batches, the monotonic times
    of the first batch and of the end of the last one."""
    return {"sent": 0, "batches": 0, "first": None, "last": None}

class Sim:
    def __init__(self, startup_faults):
        self.startup_faults = dict(startup_faults)
        self.calls = []
        self.resolved_at = {}
        self.added_at = {}
        self.bus = Bus(IFACES, self.calls.append)
        self.bus.intercept = self._intercept
        self.faults = Faults()
        self.timers = set()
        self.devices = {}          # address -> Device (in the object tree)
        self.adapter = None
        self.second_adapter = None     # /org/bluez/hci1 (fault second_adapter)
        self.root = None
        self.discovery = Discovery(self)
        self.agents = Agents(self)  # AgentManager1's agents (pairing.py)
        self.conn_factory = None
        self.start_discovery_busy_left = 0
        # Device1 sightings signalled (InterfacesAdded of a device, or a change of RSSI and the
        # other advertising data): what a client printing every update must print.
        self.sightings = 0
        self.bus_pid = None        # the private dbus-daemon's pid (--spawn-bus), for tests that kill it
        self.blinks = 0
        self.held = set()          # pids stopped by hold_clients, until resume
        self.holds = 0
        self.acquired = []         # acquire.AcquiredSocket held by clients, in the order acquired
        self.echo = EchoStats()    # what the echo device's sink received
        self.rate_stats = fresh_rate_stats()  # notify_rate_hz: what was sent, when
        self.connects = []         # every Connect attempt started: {"address", "bearer": "le"|"bredr"}

    # ------------------------------------------------------------ timers
    def later(self, ms, fn, *args):
        holder = {}

        def fire():
            self.timers.discard(holder["id"])
            try:
                fn(*args)
            except Exception:
                import traceback
                traceback.print_exc()
            return False
        holder["id"] = GLib.timeout_add(max(0, int(ms)), fire)
        self.timers.add(holder["id"])
        return holder["id"]

    def every(self, ms, fn):
        holder = {}

        def fire():
            try:
                keep = fn()
            except Exception:
                import traceback
                traceback.print_exc()
                keep = False
            if not keep:
                self.timers.discard(holder["id"])
            return bool(keep)
        holder["id"] = GLib.timeout_add(int(ms), fire)
        self.timers.add(holder["id"])
        return holder["id"]

    def cancel(self, tid):
        if tid is not None and tid in self.timers:
            self.timers.discard(tid)
            GLib.source_remove(tid)

    def cancel_all(self):
        for tid in list(self.timers):
            GLib.source_remove(tid)
        self.timers.clear()

    # ------------------------------------------------------------ lifecycle
    def attach(self, conn):
        self.bus.attach(conn)
        conn.add_signal_receiver(self._name_owner_changed, "NameOwnerChanged",
                                 dbus_interface="org.freedesktop.DBus",
                                 path="/org/freedesktop/DBus", bus_name="org.freedesktop.DBus")
        self.build_world()

    def apply_startup_faults(self):
        self.faults.clear()
        for k, v in self.startup_faults.items():
            self.faults.set(k, v)
        self.start_discovery_busy_left = self.faults.get("start_discovery_in_progress")

    def build_world(self):
        self.bus.objects.clear()
        self.devices.clear()
        self.discovery.clear()
        self.agents.clear()
        self.root = BluezRoot(self)
        self.bus.export(self.root.obj)
        self.adapter = None
        self.second_adapter = None
        if not self.faults.get("no_adapter"):
            self.create_adapter()
        if self.faults.get("second_adapter"):
            self.create_second_adapter()

    def create_adapter(self):
        powering_on = self.faults.get("adapter_powering_on_ms")
        self.adapter = Adapter(self, powered=not (self.faults.get("adapter_powered_off") or powering_on
                                                  or self.faults.get("adapter_rfkill_blocked")))
        self.bus.export(self.adapter.obj)
        if powering_on:
            GLib.timeout_add(powering_on, self.adapter.finish_powering_on)
        if self.faults.get("cached_devices"):
            self.add_cached_devices()
        if self.faults.get("bonded_devices"):
            self.add_bonded_devices()
        if self.dual_variant():
            self.add_dual_device()
        pre = self.faults.get("preconnected")
        if pre:
            self.preconnect(pre)

    def create_second_adapter(self):
        if self.second_adapter is None:
            self.second_adapter = SecondAdapter(self)
            self.bus.export(self.second_adapter.obj)

    def remove_second_adapter(self):
        if self.second_adapter is not None:
            self.bus.unexport(SecondAdapter.PATH)
            self.second_adapter = None

    def remove_adapter(self):
        if self.adapter is None:
            return
        self.discovery.clear()
        for dev in list(self.devices.values()):
            dev.abort_everything()
            self.remove_device(dev)
        self.bus.unexport(ADAPTER_PATH)
        self.adapter = None

    def add_cached_devices(self):
        for spec in world.cached_devices():
            if spec.address not in self.devices:
                self.ensure_device(spec)

    def add_bonded_devices(self):
        for spec in world.bonded_devices():
            if spec.address not in self.devices:
                self.ensure_device(spec)

    def add_dual_device(self):
        """dual_mode_device: the device a BR/EDR inquiry found (bredr_seen_ago_s ago)."""
        spec = world.dual_devices(self.dual_variant())[0]
        if spec.address not in self.devices:
            dev = self.ensure_device(spec)
            dev.bredr_seen = int(time.time()) - self.faults.get("bredr_seen_ago_s")

    def preconnect(self, address):
        address = address.upper()
        spec = self.find_spec(address)
        if spec is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"unknown device {address}")
        dev = self.ensure_device(spec)
        dev.preconnect()

    def reset(self):
        """Back to the start-up state: faults from the command line, fresh world, empty log."""
        self.cancel_all()
        for sock in list(self.acquired):
            sock.close("bluez_gone")
        self.echo = EchoStats()
        self.rate_stats = fresh_rate_stats()
        self.connects = []
        self.apply_startup_faults()
        if not self.bus.alive and self.conn_factory is not None:
            self.attach(self.conn_factory())
        else:
            for path in sorted(self.bus.objects, key=len, reverse=True):
                self.bus.unexport(path)
            self.build_world()
        self.calls.clear()
        self.resolved_at.clear()
        self.added_at.clear()

    def stop_bluez(self):
        """Like bluetoothd stopping on SIGTERM: links dropped first, then off the bus."""
        for dev in list(self.devices.values()):
            dev.link_lost(reason="local")
        self.later(100, self.exit_bluez)

    def exit_bluez(self):
        """Like bluetoothd crashing: the org.bluez connection goes away, nothing is answered."""
        self.cancel_all()
        self.bus.alive = False      # nothing below is signalled any more
        self.discovery.clear()
        self.agents.forget()
        for dev in self.devices.values():
            dev.forget_calls()
            dev.drop_link_silently()    # the kernel drops links nobody uses any more
        GLib.idle_add(lambda: (self.bus.detach(), False)[1], priority=GLib.PRIORITY_HIGH)

    def blink_bluez(self, hold=()):
        """bluetoothd "blinks": org.bluez is released and requested again at once (same
        connection, so the same unique name), then InterfacesAdded for every object, parents
        first, as a bluetoothd registering its adapter sends them; all messages are sent back
        to back, so a client reads NameOwnerChanged(old -> ""), NameOwnerChanged("" -> new)
        and the InterfacesAdded in one batch. Links, sessions and calls in flight are kept."""
        if not self.bus.alive:
            raise DBusError("org.blectl.Simulator.Error.Failed", "bluetoothd is not running")
        conn = self.bus.conn

        def driver(member, sig, *args):
            m = dbus.lowlevel.MethodCallMessage("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                "org.freedesktop.DBus", member)
            m.append(*args, signature=sig)
            return m

        paths = sorted(self.bus.objects, key=lambda p: (p.count("/"), p))
        msgs = [driver("ReleaseName", "s", "org.bluez"),
                driver("RequestName", "su", "org.bluez", dbus.UInt32(4))]      # DO_NOT_QUEUE
        msgs += [self.bus.added_message(self.bus.objects[p]) for p in paths]
        resume = self.hold_clients(hold)
        self.bus.send_back_to_back(msgs)
        resume()

        def check():
            if self.bus.alive and self.bus.conn is conn and conn.get_name_owner("org.bluez") != conn.get_unique_name():
                import sys
                print("bluez-sim: blink: org.bluez was not taken back", file=sys.stderr)
            return False
        GLib.idle_add(check)
        self.blinks += 1

    def notify_burst(self, address, uuid, count):
        """Control: count distinct notifications on a notifying characteristic, back to back."""
        dev = self.devices.get(address.upper())
        if dev is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no device {address} in the tree")
        want = world.norm_uuid(uuid)
        for ch in dev.chars():
            if ch.spec.uuid == want:
                if not ch.burst(int(count)):
                    raise DBusError("org.blectl.Simulator.Error.Failed", f"{ch.path} is not notifying")
                return
        raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no characteristic {uuid} on {address}")

    def service_changed(self, address, uuid):
        """Control: the device changes its GATT database: the service `uuid` is removed and
        added again at new handles (see GattTree.service_changed)."""
        dev = self.devices.get(address.upper())
        if dev is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no device {address} in the tree")
        index = dev.gatt.service_uuid_index(world.norm_uuid(uuid))
        if index is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no service {uuid} on {address}")
        if not dev.connected or not dev.gatt_exported:
            raise DBusError("org.blectl.Simulator.Error.Failed", f"{address} is not connected with its services resolved")
        dev.gatt.service_changed(index)

    def drop_link(self, address, remove=False):
        """Control: the device's link drops (see Device.drop_link)."""
        dev = self.devices.get(address.upper())
        if dev is None:
            raise DBusError("org.blectl.Simulator.Error.InvalidArguments", f"no device {address} in the tree")
        if not dev.drop_link(remove):
            raise DBusError("org.blectl.Simulator.Error.Failed", f"{address} is not connected")

    # ------------------------------------------------------------ one client read
    def hold_clients(self, names):
        """hold_client_ms: stops (SIGSTOP) the processes of these unique names and waits until
        they are stopped, so that a group of messages sent now is all in their sockets when
        they run again (resume_later). Returns a callable to run once the group is sent. A
        client that did not get the CPU for a moment reads such a group at once; this makes
        it certain. Never stops this process; names without a pid are skipped."""
        ms = self.faults.get("hold_client_ms")
        if ms <= 0 or not self.bus.alive:
            return lambda: None
        pids = set()
        for name in set(names):
            try:
                pid = int(self.bus.conn.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                      "GetConnectionUnixProcessID", "s", (name,)))
            except dbus.DBusException:
                continue
            if pid != os.getpid() and pid not in self.held:
                pids.add(pid)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
                self.held.add(pid)
            except OSError:
                pass
        deadline = time.monotonic() + 0.05
        while time.monotonic() < deadline and not all(_stopped(p) for p in pids & self.held):
            time.sleep(0.0005)
        if pids:
            self.holds += 1

        def resume_later():
            if self.bus.alive:
                self.bus.conn.flush()
            # Not self.later: a reset must not cancel it (the client would stay stopped).
            GLib.timeout_add(ms, lambda: (self.resume(pids), False)[1])
        return resume_later

    def resume(self, pids=None):
        for pid in list(self.held if pids is None else pids):
            self.held.discard(pid)
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass

    # ------------------------------------------------------------ devices
    def all_specs(self):
        specs = world.default_devices() + world.filler_devices() + world.cached_devices() + world.bonded_devices()
        specs += world.foreign_devices() + world.weird_devices() + world.toolbox_devices() + world.secure_devices()
        specs += world.echo_devices() + world.dual_devices(self.dual_variant() or "inquiry") + world.battery_devices()
        specs += world.hidden_devices() + world.twin_dis_devices()
        return specs

    def dual_variant(self):
        """The dual_mode_device variant, "" when off (an unknown value counts as "inquiry")."""
        v = self.faults.get("dual_mode_device")
        if not v or v.lower() in ("0", "false", "no", "off"):
            return ""
        return v if v in world.DUAL_VARIANTS else "inquiry"

    def find_spec(self, address):
        for s in self.all_specs():
            if s.address == address:
                return s
        n = self.faults.get("advertisers")
        for s in world.bench_devices(n, False):
            if s.address == address:
                return s
        return None

    def advertisers(self):
        specs = world.default_devices() + world.filler_devices()
        if self.faults.get("foreign_filter"):
            specs += world.foreign_devices()
        if self.faults.get("weird_names"):
            specs += world.weird_devices()
        if self.faults.get("echo_device"):
            specs += world.echo_devices()
        if self.faults.get("toolbox_device"):
            specs += world.toolbox_devices()
        if self.faults.get("battery_devices"):
            specs += world.battery_devices()
        if self.faults.get("secure_device"):
            specs += world.secure_devices()
        if self.faults.get("hidden_device"):
            specs += world.hidden_devices()
        if self.faults.get("twin_dis_device"):
            specs += world.twin_dis_devices()
        if self.dual_variant():
            specs += world.dual_devices(self.dual_variant())
        return specs

    def ensure_device(self, spec, rssi=None):
        dev = self.devices.get(spec.address)
        if dev is None:
            dev = Device(self, spec, rssi)
            self.devices[spec.address] = dev
            self.bus.export(dev.obj)
            self.sightings += 1
            self.added_at[spec.address] = time.monotonic()
        return dev

    def device_by_path(self, path):
        for d in self.devices.values():
            if d.path == path:
                return d
        return None

    def remove_device(self, dev):
        self.devices.pop(dev.spec.address, None)
        dev.removed = True
        self.bus.unexport_tree(dev.path)

    def is_advertising(self, address):
        if any(s.address == address for s in self.advertisers()):
            return True
        n = self.faults.get("advertisers")
        return address.startswith("D0:00:") and n > 0 and any(s.address == address for s in world.bench_devices(n, False))

    # ------------------------------------------------------------ clients
    def _name_owner_changed(self, name, old, new):
        if name.startswith(":") and old and not new:
            for record in self.calls:
                if record["sender"] == name and record["outcome"] == "pending":
                    record["caller_left"] = True
            self.discovery.client_left(name)
            for dev in list(self.devices.values()):
                dev.client_left(name)
            self.agents.client_left(name)

    # ------------------------------------------------------------ faults at run time
    def set_fault(self, name, value):
        if name not in FAULTS:
            raise KeyError(name)
        old = self.faults.get(name)
        self.faults.set(name, value)
        if name == "start_discovery_in_progress":
            self.start_discovery_busy_left = value
        if not self.bus.alive:
            return
        if name == "start_discovery_held" and not value:
            self.discovery.release_held()
        elif name == "connect_held" and not value:
            for dev in list(self.devices.values()):
                dev.release_held_connect()
        elif name == "pair_held" and not value:
            for dev in list(self.devices.values()):
                dev.release_held_pair()
        elif name == "disconnect_held" and not value:
            for dev in list(self.devices.values()):
                dev.release_held_disconnect()
        elif name == "start_notify_held" and not value:
            for dev in list(self.devices.values()):
                for ch in dev.chars():
                    ch.release_held()
        elif name == "adapter_powered_off" and self.adapter is not None and old != value:
            self.adapter.set_powered(not value)
        elif name == "adapter_rfkill_blocked" and self.adapter is not None and old != value:
            self.adapter.set_powered(False)
        elif name == "no_adapter" and old != value:
            if value:
                self.remove_adapter()
            else:
                self.create_adapter()
        elif name == "cached_devices" and value and self.adapter is not None:
            self.add_cached_devices()
        elif name == "bonded_devices" and value and self.adapter is not None:
            self.add_bonded_devices()
        elif name == "second_adapter" and old != value:
            if value:
                self.create_second_adapter()
            else:
                self.remove_second_adapter()
        elif name == "dual_mode_device" and value and self.adapter is not None:
            self.add_dual_device()
        elif name == "preconnected" and value and self.adapter is not None:
            self.preconnect(value)
        elif name == "att_mtu" and old != value:
            for dev in self.devices.values():
                for ch in dev.chars():
                    ch.set(MTU=value)
        elif name in ("notify_every_ms", "notify_every_char", "notify_rate_hz", "notify_rate_total"):
            for dev in self.devices.values():
                dev.gatt.restart_tickers()

    # ------------------------------------------------------------ interception
    def _intercept(self, call):
        if self.faults.get("access_denied"):
            call.error("org.freedesktop.DBus.Error.AccessDenied",
                       'Rejected send message, 1 matched rules; type="method_call", sender="%s" '
                       '(uid=1000 pid=0 comm="") interface="%s" member="%s" error name="(unset)" '
                       'requested_reply="0" destination="org.bluez" (uid=0 pid=0 comm="/usr/libexec/bluetooth/bluetoothd ")'
                       % (call.sender, call.interface, call.member))
            return True
        if self.faults.get("get_managed_objects_held") and call.member == "GetManagedObjects":
            return True     # left unanswered
        target = self.faults.get("bluez_exit_on")
        if target and call.member == target:
            self.exit_bluez()
            return True
        target = self.faults.get("bluez_blink_on")
        if target and call.member == target:
            self.blink_bluez(hold=[call.sender])     # then the call is handled as usual
        target = self.faults.get("bluez_stop_on")
        if target and call.member == target:
            self.stop_bluez()
            return True
        target = self.faults.get("power_off_on")
        if target and call.member == target and self.adapter is not None:
            self.adapter.set_powered(False)
            call.error(ERR + "Failed", "Operation failed")
            return True
        target = self.faults.get("rfkill_block_on")
        if target and call.member == target and self.adapter is not None:
            self.adapter.set_powered(False, blocked=True)
            call.error(ERR + "Failed", "Operation failed")
            return True
        target = self.faults.get("remove_adapter_on")
        if target and call.member == target and self.adapter is not None:
            for dev in list(self.devices.values()):
                dev.link_lost(reason="power")   # links dropped, calls in flight failed
            call.error(ERR + "Failed", "Operation failed")
            self.remove_adapter()
            return True
        return False

    # ------------------------------------------------------------ state
    def state(self):
        conns, pend, gatt, notif, pairings = [], [], [], [], []
        for dev in self.devices.values():
            if dev.connected:
                conns.append({"address": dev.spec.address, "connected_by": dev.connected_by,
                              "preconnected": dev.preconnected, "disconnecting": dev.disconnecting})
            if dev.connect_call is not None:
                pend.append(dev.spec.address)
            if dev.pairing is not None:
                pairings.append(dev.pairing.state())
            for ch in dev.chars():
                if ch.busy is not None:
                    gatt.append({"op": ch.busy.member, "path": ch.path, "client": ch.busy.sender})
                for c in ch.pending_notify.values():
                    gatt.append({"op": c.member, "path": ch.path, "client": c.sender})
                for c in sorted(ch.notify_clients):
                    notif.append({"path": ch.path, "client": c})
        return {
            "bluez_running": self.bus.alive,
            "adapter": self.adapter is not None,
            "second_adapter": self.second_adapter is not None,
            "powered": bool(self.adapter and self.adapter.powered),
            "discovering": bool(self.adapter and self.adapter.discovering),
            "discovery_sessions": [{"client": c, "filter": f} for c, f in self.discovery.sessions.items()],
            "pending_start_discovery": sorted(self.discovery.pending),
            "connections": conns,
            "pending_connects": pend,
            "pending_gatt": gatt,
            "notify_sessions": notif,
            "devices": sorted(self.devices),
            "faults": self.faults.as_json(),
            "sightings": self.sightings,
            "bus_pid": self.bus_pid,
            "blinks": self.blinks,
            "holds": self.holds,
            "acquired": [s.describe() for s in self.acquired],
            "echo": self.echo.as_json(),
            "notify_rate": {"sent": self.rate_stats["sent"], "batches": self.rate_stats["batches"],
                            "seconds": (self.rate_stats["last"] - self.rate_stats["first"])
                            if self.rate_stats["first"] is not None else None},
            "agents": self.agents.state(),
            "pairings": pairings,
            "agent_calls": list(self.agents.requests),
            "paired": sorted(a for a, d in self.devices.items() if d.paired),
            "connects": list(self.connects),
            "resolved_at": dict(self.resolved_at),
            "added_at": dict(self.added_at),
        }

    def state_json(self):
        return json.dumps(self.state())


def _stopped(pid):
    """Whether the process is stopped (state T in /proc/PID/stat), or gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except OSError:
        return True
