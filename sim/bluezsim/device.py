"""org.bluez.Device1 objects: advertising data, the bearer a dual-mode device is connected
over, writable properties, Pair/CancelPairing and the calls and clients that go away. The
LE connection life cycle: device_connect.py (Connect, service resolution, Battery1) and
device_disconnect.py (Disconnect with BlueZ's timer, the link lost)."""

import time

from .bus import Obj
from .call import DBusError
from .device_connect import DeviceConnect
from .device_disconnect import DeviceDisconnect
from .gatt import GattTree
from .ifaces import ERR
from .world import icon_for
from .pairing import Pairing
from . import preferred_bearer

SEEN_THRESHOLD_S = 300   # BlueZ 5.66 src/device.c SEEN_TRESHHOLD


def alias_for(spec):
    """BlueZ src/device.c dev_property_get_alias: the alias set, else Name, else the address
    with '-' separators."""
    if spec.alias:
        return spec.alias
    return spec.name if spec.name else spec.address.replace(":", "-")


class Device(DeviceConnect, DeviceDisconnect):
    def __init__(self, sim, spec, rssi=None):
        self.sim = sim
        self.spec = spec
        self.path = "/org/bluez/hci0/dev_" + spec.address.replace(":", "_")
        self.rssi = rssi
        self.connected = False
        self.services_resolved = False
        self.connected_by = None
        self.preconnected = False
        self.connect_call = None
        self.connect_timers = []
        self.link_timers = []
        self.disconnecting = False
        self.disconnect_waiters = []     # Call or callable
        self.disconnect_timer = None
        self.paired = spec.paired
        self.trusted = spec.trusted
        self.pairing = None              # the Pair in progress (pairing.Pairing), BlueZ's device->bonding
        self.on_link_lost = None         # callable(reason): the simulated central's link (central.py)
        self.removed = False
        self.gatt = GattTree(sim, self)
        self.gatt_exported = False
        self.battery_exported = False
        # BlueZ's le_state.svc_resolved (not the ServicesResolved property): once set,
        # Device1.UUIDs lists the resolved services and advertised UUIDs are ignored.
        self.le_svc_resolved = False
        # Dual-mode devices (spec.dual): when bluetoothd last saw each bearer (time(NULL),
        # whole seconds, as BlueZ's bearer_state.last_seen), and the bearer of the link up.
        self.bredr_seen = None
        self.le_seen = None
        self.bearer = None
        adv = rssi is not None
        self.obj = o = Obj(self.path)
        o.ifaces["org.bluez.Device1"] = {
            "Address": ["s", spec.address],
            "AddressType": ["s", spec.address_type],
            "Name": ["s", spec.name],
            "Alias": ["s", alias_for(spec)],
            # BlueZ leaves Appearance out when the device has a Class (get_appearance).
            "Appearance": ["q", None if spec.device_class else spec.appearance],
            "Icon": ["s", icon_for(spec)],
            "Class": ["u", spec.device_class],
            "Modalias": ["s", spec.modalias],
            "Paired": ["b", spec.paired],
            "Bonded": ["b", spec.bonded],
            "Trusted": ["b", spec.trusted],
            "Blocked": ["b", spec.blocked],
            "LegacyPairing": ["b", False],
            "RSSI": ["n", rssi],
            "TxPower": ["n", spec.tx_power if adv else None],
            "Connected": ["b", False],
            "UUIDs": ["as", [] if (adv and sim.faults.get("uuids_in_scan_response")) else list(spec.uuids)],
            "Adapter": ["o", "/org/bluez/hci0"],
            "ManufacturerData": ["a{qv}", dict(spec.manufacturer_data) if (adv and spec.manufacturer_data) else None],
            "ServiceData": ["a{sv}", dict(spec.service_data) if (adv and spec.service_data) else None],
            "ServicesResolved": ["b", False],
            # Experimental in 5.66 (only with --experimental), there by default from 5.82.
            "AdvertisingFlags": ["ay", spec.adv_flags if (adv and sim.advertising_flags_exported()) else None],
            "PreferredBearer": ["s", preferred_bearer.initial(self)],
        }
        if adv and spec.uuids and sim.faults.get("uuids_in_scan_response"):
            # The kernel reported the advertisement and its scan response separately: the
            # service UUIDs (carried in the scan response) arrive as a later change.
            self.sim.later(100, lambda: None if (self.removed or self.le_svc_resolved) else self.set(UUIDs=list(spec.uuids)))
        o.ifaces["org.bluez.Device1"].update(sim.device_extra_properties())
        for bearer in sim.bearer_interfaces(spec):
            o.ifaces[bearer] = {}
        o.handlers["org.bluez.Device1"] = self
        o.writable["org.bluez.Device1"] = {"Trusted": self._set_trusted, "Blocked": self._set_blocked,
                                           "Alias": self._set_alias}
        if preferred_bearer.offered(self):
            o.writable["org.bluez.Device1"]["PreferredBearer"] = lambda call, value: preferred_bearer.set_preferred_bearer(self, call, value)

    # ------------------------------------------------------------ helpers
    def set(self, **kw):
        if not self.removed:
            self.sim.bus.set_props(self.obj, "org.bluez.Device1", kw)

    def chars(self):
        return self.gatt.chars

    def _later(self, bucket, ms, fn, *args):
        tid = self.sim.later(ms, fn, *args)
        bucket.append(tid)
        return tid

    def _cancel(self, bucket):
        for t in bucket:
            self.sim.cancel(t)
        bucket.clear()

    def is_temporary(self):
        return not (self.paired or self.trusted or self.connected or self.connect_call is not None
                    or self.preconnected or self.spec.group == "cached")

    # ------------------------------------------------------------ advertising
    def advertised(self, rssi, force=False):
        if self.removed:
            return
        self.seen_over("le")
        if self.rssi is None:
            self.rssi = rssi
            ch = {"RSSI": rssi}
            if self.spec.tx_power is not None:
                ch["TxPower"] = self.spec.tx_power
            if self.spec.manufacturer_data:
                ch["ManufacturerData"] = dict(self.spec.manufacturer_data)
            if self.spec.service_data:
                ch["ServiceData"] = dict(self.spec.service_data)
            if self.sim.advertising_flags_exported():
                ch["AdvertisingFlags"] = self.spec.adv_flags
            self.set(**ch)
            self.sim.sightings += 1
        elif rssi != self.rssi and (force or abs(rssi - self.rssi) >= 8):
            self.rssi = rssi
            self.set(RSSI=rssi)
            self.sim.sightings += 1

    def invalidate_rssi(self):
        if self.rssi is None:
            return
        self.rssi = None
        ch = {"RSSI": None}
        if self.obj.get("org.bluez.Device1", "TxPower") is not None:
            ch["TxPower"] = None
        self.set(**ch)

    def seen_over(self, transport):
        """An advertising report ("le") or an inquiry result ("bredr") of a dual-mode device:
        BlueZ 5.66 device_update_last_seen. An LE report whose flags lack BR/EDR Not
        Supported (0x04) refreshes the BR/EDR bearer too (adapter.c
        btd_adapter_update_found_device)."""
        if not self.spec.dual:
            return
        now = int(time.time())
        if transport == "bredr":
            self.bredr_seen = now
            return
        self.le_seen = now
        flags = self.spec.adv_flags[0] if self.spec.adv_flags else 0
        if flags and not flags & 0x04:
            self.bredr_seen = now

    def select_bearer(self):
        """BlueZ 5.66 src/device.c dev_connect and select_conn_bearer, for the cases this
        world has (nothing bonded, a public address, the adapter BR/EDR-capable): "le" or
        "bredr"."""
        if not self.spec.dual:
            return "le"
        if self.connected:
            return self.bearer or "le"
        if preferred_bearer.preferred(self):
            return preferred_bearer.preferred(self)
        now = int(time.time())

        def age(t):
            if t is None or now - t > SEEN_THRESHOLD_S:
                return None
            return now - t
        bredr, le = age(self.bredr_seen), age(self.le_seen)
        le_known = self.le_seen is not None      # dev->le: set by the first LE report
        if bredr is None and le is None:
            return "le" if le_known else "bredr"   # dev->bdaddr_type
        if not le_known or le is None:
            return "bredr"
        if bredr is None:
            return "le"
        return "bredr" if bredr <= le else "le"     # a tie goes to BR/EDR

    # ------------------------------------------------------------ properties
    def _set_trusted(self, call, value):
        call.reply()
        self.trusted = bool(value)
        self.set(Trusted=bool(value))

    def _set_blocked(self, call, value):
        call.reply()
        self.set(Blocked=bool(value))
        if value and self.connected:
            self.link_lost()

    def _set_alias(self, call, value):
        call.reply()
        # An empty alias clears the one set (device_set_alias): Name, else the address.
        self.set(Alias=value or (self.spec.name if self.spec.name else self.spec.address.replace(":", "-")))

    # ------------------------------------------------------------ bluetoothd and clients going away
    def forget_calls(self):
        self.connect_call = None
        self.pairing = None
        self.disconnect_waiters = []
        self.gatt.forget_calls()

    def client_left(self, sender):
        self.gatt.client_left(sender)
        if self.pairing is not None and self.pairing.call.sender == sender:
            self.pairing.requester_left()

    # ------------------------------------------------------------ pairing & profiles
    def m_Pair(self, call):
        """src/device.c pair_device: one bonding at a time, AlreadyExists when bonded; the
        link is brought up first when down; the caller's agent (else the default one) is
        asked what the pairing method needs (sim/bluezsim/pairing.py)."""
        ad = self.sim.adapter
        if ad is None or not ad.powered:
            raise DBusError(ERR + "NotReady", "Resource Not Ready")
        if self.pairing is not None:
            raise DBusError(ERR + "InProgress", "In Progress")
        if self.paired:
            raise DBusError(ERR + "AlreadyExists", "Already Exists")
        self.pairing = Pairing(self, call)
        if self.sim.faults.get("pair_held"):
            self.pairing.stage = "held"      # release_held_pair, when the fault is cleared
            return
        self.pairing.start()

    def release_held_pair(self):
        """pair_held cleared: a held Pair is handled as if it had just been called."""
        if self.pairing is not None and self.pairing.stage == "held":
            self.pairing.stage = "connecting"
            self.pairing.start()

    def m_CancelPairing(self, call):
        if self.pairing is None:
            raise DBusError(ERR + "DoesNotExist", "Does Not Exist")
        self.pairing.cancel()            # Pair answered AuthenticationCanceled first
        call.reply()

    def m_ConnectProfile(self, call, uuid):
        raise DBusError(ERR + "InvalidArguments", "Invalid arguments in method call")

    def m_DisconnectProfile(self, call, uuid):
        raise DBusError(ERR + "InvalidArguments", "Invalid arguments in method call")
