"""The simulator's state container: object tree, faults, clients, call log, and the
reset/build of the world. Components (adapter, discovery, devices, GATT) hang off it;
its other concerns are mixed in: timers.py, holds.py, bluetoothd.py, device_actions.py,
catalogue.py, runtime_faults.py, device_faults.py, state.py, profiles.py (the version's surface); LE connection creation is
le_connector.py's."""

import time

from gi.repository import GLib

from . import versions
from .bus import Bus
from .call import DBusError
from .ifaces import IFACES
from .faults import Faults
from . import world
from .adapter import Adapter, BluezRoot, SecondAdapter
from .discovery import Discovery
from .device import Device
from .acquire import EchoStats
from .pairing import Agents
from .app_calls import AppCalls
from .advertising import Advertising
from .gatt_server import GattServer
from .central import Central
from .timers import Timers
from .holds import ClientHolds
from .bluetoothd import BluetoothdLife
from .device_actions import DeviceActions
from .catalogue import Catalogue
from .runtime_faults import RuntimeFaults
from .device_faults import DeviceFaults
from .le_connector import LeConnector
from .state import SimState
from .profiles import PROFILE_FAULTS, VersionSurface

ADAPTER_PATH = "/org/bluez/hci0"


def fresh_rate_stats():
    """notify_rate_hz's totals: notifications sent, in how many batches, the monotonic times
    of the first batch and of the end of the last one."""
    return {"sent": 0, "batches": 0, "first": None, "last": None}


class Sim(Timers, ClientHolds, BluetoothdLife, DeviceActions, Catalogue, RuntimeFaults, DeviceFaults, SimState,
          VersionSurface):
    def __init__(self, startup_faults, bluez=versions.DEFAULT):
        self.startup_faults = dict(startup_faults)
        self.bluez = versions.parse(bluez)     # the bluetoothd version modelled: (5, 66)
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
        self.app_calls = AppCalls(self)        # calls into clients' exported objects (app_calls.py)
        self.advertising = Advertising(self)   # LEAdvertisingManager1 (advertising.py)
        self.gatt_server = GattServer(self)    # GattManager1 (gatt_server.py)
        self.central = Central(self)           # the simulated central (central.py)
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
        self.le_connector = LeConnector(self)   # LE connection creation, queue and link cap
        self.device_faults = {}    # address -> set of device_faults.DEVICE_FAULTS kinds

    # ------------------------------------------------------------ lifecycle
    def attach(self, conn):
        self.bus.attach(conn)
        conn.add_signal_receiver(self._name_owner_changed, "NameOwnerChanged",
                                 dbus_interface="org.freedesktop.DBus",
                                 path="/org/freedesktop/DBus", bus_name="org.freedesktop.DBus")
        self.build_world()

    def bluez_at_least(self, version):
        """Whether the modelled bluetoothd is `version` ('5.80') or later."""
        major, minor = version.split(".")
        return self.bluez >= (int(major), int(minor))

    def apply_startup_faults(self):
        """The version's own behaviours (profiles.PROFILE_FAULTS), then the faults given."""
        self.faults.clear()
        for k, v in {**PROFILE_FAULTS[self.bluez], **self.startup_faults}.items():
            self.faults.set(k, v)
        self.start_discovery_busy_left = self.faults.get("start_discovery_in_progress")

    def build_world(self):
        self.bus.objects.clear()
        self.devices.clear()
        self.discovery.clear()
        self.agents.clear()
        self.advertising.clear()
        self.gatt_server.clear()
        self.central.clear()
        self.app_calls.clear()
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
        self.advertising.release_all()     # btd_adv_manager_destroy: Release each
        self.gatt_server.forget()          # btd_gatt_database_destroy: no Release
        for dev in list(self.devices.values()):
            dev.abort_everything()
            self.remove_device(dev)
        self.central.clear()
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
        self.le_connector.clear()
        self.device_faults.clear()
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

    # ------------------------------------------------------------ devices in the tree
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
        self.le_connector.done(dev, "cancelled")
        self.devices.pop(dev.spec.address, None)
        dev.removed = True
        self.bus.unexport_tree(dev.path)

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
            self.advertising.client_left(name)
            self.gatt_server.client_left(name)
