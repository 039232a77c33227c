"""/org/bluez (AgentManager1, ProfileManager1 stubs) and /org/bluez/hci0 (Adapter1)."""

from . import profiles
from .bus import Obj
from .call import DBusError
from .ifaces import ERR
from .world import norm_uuid, u16

FILTER_KEYS = ("UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern")


def invalid_args():
    return DBusError(ERR + "InvalidArguments", "Invalid arguments in method call")


class BluezRoot:
    def __init__(self, sim):
        self.sim = sim
        self.obj = Obj("/org/bluez")
        self.obj.ifaces["org.bluez.AgentManager1"] = {}
        self.obj.ifaces["org.bluez.ProfileManager1"] = {}
        self.obj.handlers["org.bluez.AgentManager1"] = self
        self.obj.handlers["org.bluez.ProfileManager1"] = self
        self.profiles = {}

    def m_RegisterAgent(self, call, path, capability):
        self.sim.agents.register(call, path, capability)

    def m_UnregisterAgent(self, call, path):
        self.sim.agents.unregister(call, path)

    def m_RequestDefaultAgent(self, call, path):
        self.sim.agents.request_default(call, path)

    def m_RegisterProfile(self, call, path, uuid, opts):
        key = (call.sender, str(path))
        if key in self.profiles:
            raise DBusError(ERR + "AlreadyExists", "Already Exists")
        self.profiles[key] = str(uuid)
        call.reply()

    def m_UnregisterProfile(self, call, path):
        if self.profiles.pop((call.sender, str(path)), None) is None:
            raise DBusError(ERR + "DoesNotExist", "Does Not Exist")
        call.reply()


class Adapter:
    ADDRESS = "00:1A:7D:DA:71:13"

    def __init__(self, sim, powered=True):
        self.sim = sim
        self.path = "/org/bluez/hci0"
        self.obj = o = Obj(self.path)
        self.powered = powered
        o.ifaces["org.bluez.Adapter1"] = {
            "Address": ["s", self.ADDRESS],
            "AddressType": ["s", "public"],
            "Name": ["s", "blesim-host"],
            "Alias": ["s", "blesim-host"],
            "Class": ["u", 0x6C010C if powered else 0],
            "Powered": ["b", powered],
            "Discoverable": ["b", False],
            "DiscoverableTimeout": ["u", 180],
            "Pairable": ["b", True],
            "PairableTimeout": ["u", 0],
            "Discovering": ["b", False],
            "UUIDs": ["as", [u16(0x1801), u16(0x1800), u16(0x110E), u16(0x110C), u16(0x1200),
                             u16(0x110B), u16(0x110A), "0000180a-0000-1000-8000-00805f9b34fb"]
                      # 5.82: the sap plugin's SIM Access server
                      + ([u16(0x112D)] if sim.bluez_at_least("5.82") else [])],
            "Modalias": ["s", profiles.modalias(sim.bluez)],
            "Roles": ["as", [r for r in sim.faults.get("adapter_roles").split(",") if r]],
            # Experimental in 5.66: only with bluetoothd --experimental (fault "experimental").
            "PowerState": ["s", self._power_state(powered)],
            **sim.adapter_extra_properties(profiles.HCI0_CONTROLLER, connectable=powered),
        }
        o.handlers["org.bluez.Adapter1"] = self
        # bluetoothd 5.66 registers these on every LE adapter (realbluez/trees/5.66.json has
        # them): src/advertising.c once the controller's advertising features are read, and
        # src/gatt-database.c.
        o.ifaces["org.bluez.GattManager1"] = {}
        o.handlers["org.bluez.GattManager1"] = sim.gatt_server
        o.ifaces["org.bluez.LEAdvertisingManager1"] = sim.advertising.properties()
        o.handlers["org.bluez.LEAdvertisingManager1"] = sim.advertising
        o.writable["org.bluez.Adapter1"] = {
            "Powered": self._set_powered, "Alias": self._set_alias, "Discoverable": self._set_bool("Discoverable"),
            "Pairable": self._set_bool("Pairable"), "DiscoverableTimeout": self._set_u("DiscoverableTimeout"),
            "PairableTimeout": self._set_u("PairableTimeout")}
        self.filters = {}   # sender -> filter dict set via SetDiscoveryFilter

    @property
    def discovering(self):
        return bool(self.obj.get("org.bluez.Adapter1", "Discovering"))

    def set(self, **kw):
        self.sim.bus.set_props(self.obj, "org.bluez.Adapter1", kw)

    def _power_state(self, powered):
        # Experimental in 5.66: without --experimental there is no PowerState at all, even
        # while the adapter powers on.
        if not self.sim.adapter_has_power_state():
            return None
        if self.sim.faults.get("adapter_powering_on_ms") and not powered:
            return "off-enabling"
        if not powered and self.sim.faults.get("adapter_rfkill_blocked"):
            return "off-blocked"
        return "on" if powered else "off"

    # ------------------------------------------------------------ power
    def set_powered(self, on, blocked=False):
        """Powers the adapter on or off; `blocked`: off by rfkill (PowerState off-blocked)."""
        if blocked:
            self.sim.faults.set("adapter_rfkill_blocked", True)
        if on == self.powered:
            if not on:
                self.set(**self._power_state_change(False))
            return
        self.powered = on
        if not on:
            self.sim.discovery.clear(emit=True)
            for dev in list(self.sim.devices.values()):
                dev.link_lost(reason="power")
            self.set(Powered=False, Class=0, **self._power_state_change(False))
        else:
            self.set(Powered=True, Class=0x6C010C, **self._power_state_change(True))

    def finish_powering_on(self):
        """The AutoEnable power-on that `adapter_powering_on_ms` started completes."""
        self.sim.faults.set("adapter_powering_on_ms", 0)
        self.set_powered(True)
        return False

    def _power_state_change(self, powered):
        state = self._power_state(powered)
        return {} if state is None else {"PowerState": state}

    def _set_powered(self, call, value):
        if value and self.sim.faults.get("adapter_rfkill_blocked"):
            raise DBusError(ERR + "Blocked", "Blocked through rfkill")
        call.reply()
        self.set_powered(bool(value))

    def _set_alias(self, call, value):
        call.reply()
        self.set(Alias=value or self.obj.get("org.bluez.Adapter1", "Name"))

    def _set_bool(self, name):
        def f(call, value):
            if not self.powered:
                raise DBusError(ERR + "NotReady", "Resource Not Ready")
            call.reply()
            self.set(**{name: bool(value)})
        return f

    def _set_u(self, name):
        def f(call, value):
            call.reply()
            self.set(**{name: int(value)})
        return f

    # ------------------------------------------------------------ methods
    def m_StartDiscovery(self, call):
        self.sim.discovery.start(call)

    def m_StopDiscovery(self, call):
        self.sim.discovery.stop(call)

    def m_GetDiscoveryFilters(self, call):
        call.reply("as", list(FILTER_KEYS))

    def m_SetDiscoveryFilter(self, call, props):
        if not self.powered:
            raise DBusError(ERR + "NotReady", "Resource Not Ready")
        flt = parse_filter(props)
        call.record["filter"] = dict(flt)     # in the call log: what the client asked for
        if flt:
            self.filters[call.sender] = flt
        else:
            self.filters.pop(call.sender, None)
        self.sim.discovery.filter_changed(call.sender, flt)
        call.reply()

    def m_RemoveDevice(self, call, path):
        dev = self.sim.device_by_path(str(path))
        if dev is None:
            raise DBusError(ERR + "DoesNotExist", "Does Not Exist")
        if not self.powered:
            raise DBusError(ERR + "NotReady", "Resource Not Ready")
        if dev.connected:
            dev.request_disconnect(None, on_done=lambda: (call.reply(), self.sim.remove_device(dev)))
            return
        dev.abort_everything()
        # Not connected: removed, then answered (gdbus flushes the InterfacesRemoved before
        # the reply); connected: answered when the link is down, then removed (5.66
        # device_remove_connection).
        self.sim.remove_device(dev)
        call.reply()


class SecondAdapter:
    """/org/bluez/hci1 (fault second_adapter): a second controller, powered off and blocked
    by rfkill, with no devices. Like BlueZ 5.66 for such an adapter: its name gets " #2"
    (the hostname plugin), powering it on fails org.bluez.Error.Blocked, and discovery
    answers NotReady."""

    PATH = "/org/bluez/hci1"
    ADDRESS = "00:1A:7D:DA:71:14"

    def __init__(self, sim):
        self.sim = sim
        self.path = self.PATH
        self.obj = o = Obj(self.path)
        o.ifaces["org.bluez.Adapter1"] = {
            "Address": ["s", self.ADDRESS],
            "AddressType": ["s", "public"],
            "Name": ["s", "blesim-host #2"],
            "Alias": ["s", "blesim-host #2"],
            "Class": ["u", 0],
            "Powered": ["b", False],
            "PowerState": ["s", "off-blocked" if sim.adapter_has_power_state() else None],
            "Discoverable": ["b", False],
            "DiscoverableTimeout": ["u", 180],
            "Pairable": ["b", True],
            "PairableTimeout": ["u", 0],
            "Discovering": ["b", False],
            "UUIDs": ["as", []],
            "Modalias": ["s", "usb:v0A12p0001d8891"],
            "Roles": ["as", ["central"]],
            **sim.adapter_extra_properties(profiles.HCI1_CONTROLLER, connectable=False),
        }
        o.handlers["org.bluez.Adapter1"] = self
        o.writable["org.bluez.Adapter1"] = {"Powered": self._set_powered}

    @staticmethod
    def _not_ready():
        return DBusError(ERR + "NotReady", "Resource Not Ready")

    def _set_powered(self, call, value):
        if not value:
            call.reply()
            return
        raise DBusError(ERR + "Blocked", "Blocked through rfkill")

    def m_StartDiscovery(self, call):
        raise self._not_ready()

    def m_StopDiscovery(self, call):
        raise self._not_ready()

    def m_GetDiscoveryFilters(self, call):
        call.reply("as", list(FILTER_KEYS))

    def m_SetDiscoveryFilter(self, call, props):
        raise self._not_ready()

    def m_RemoveDevice(self, call, path):
        raise DBusError(ERR + "DoesNotExist", "Does Not Exist")


def parse_filter(props):
    """Validate a SetDiscoveryFilter dict like BlueZ's parse_discovery_filter_dict."""
    import dbus
    flt = {}
    for key, v in props.items():
        if key == "UUIDs":
            if not isinstance(v, dbus.Array) or not all(isinstance(x, dbus.String) for x in v):
                raise invalid_args()
            try:
                flt["UUIDs"] = [norm_uuid(str(x)) for x in v]
                for x in flt["UUIDs"]:
                    if len(x) != 36:
                        raise ValueError
                    int(x.replace("-", ""), 16)
            except ValueError:
                raise invalid_args() from None
        elif key == "RSSI":
            if not isinstance(v, dbus.Int16) or not -127 <= int(v) <= 20:
                raise invalid_args()
            flt["RSSI"] = int(v)
        elif key == "Pathloss":
            if not isinstance(v, dbus.UInt16) or int(v) > 137:
                raise invalid_args()
            flt["Pathloss"] = int(v)
        elif key == "Transport":
            if not isinstance(v, dbus.String) or str(v) not in ("auto", "bredr", "le"):
                raise invalid_args()
            flt["Transport"] = str(v)
        elif key in ("DuplicateData", "Discoverable"):
            if not isinstance(v, dbus.Boolean):
                raise invalid_args()
            flt[key] = bool(v)
        elif key == "Pattern":
            if not isinstance(v, dbus.String):
                raise invalid_args()
            flt["Pattern"] = str(v)
        else:
            raise invalid_args()
    if "RSSI" in flt and "Pathloss" in flt:
        raise invalid_args()
    return flt
