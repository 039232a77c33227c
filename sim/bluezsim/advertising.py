"""org.bluez.LEAdvertisingManager1 on the adapter, as bluetoothd 5.66 implements it
(src/advertising.c): RegisterAdvertisement reads the client's LEAdvertisement1 object back
(GetManagedObjects on its path, then Properties.GetAll, as its GDBusClient does), parses it
(adv_data.py), takes an instance and answers; UnregisterAdvertisement; Release when
bluetoothd itself drops one (its Timeout, the adapter going away, bluetoothd stopping, the
control ReleaseAdvertisement); none when the client leaves the bus. One idea: which
advertisements are registered, and their life."""

import dbus

from . import adv_data
from .app_calls import OM, PROPS, unwatch
from .call import DBusError
from .ifaces import ERR

MANAGER = "org.bluez.LEAdvertisingManager1"
ADVERTISEMENT = "org.bluez.LEAdvertisement1"


class Registered:
    """One advertisement (struct btd_adv_client): its client, path, instance, what was parsed."""

    def __init__(self, owner, path, instance, call):
        self.owner = owner
        self.path = path
        self.instance = instance
        self.call = call                  # RegisterAdvertisement, until answered
        self.ad = None
        self.packets = (b"", b"")         # (advertising data, scan response) on air
        self.timers = []
        self.watch = None
        self.props = {}                   # as read from the client, for the state

    @property
    def active(self):
        return self.call is None


class Advertising:
    """Expects of the Sim: bus, adapter, faults, app_calls, later(), cancel(), experimental(),
    adv_capabilities_exported()."""

    def __init__(self, sim):
        self.sim = sim
        self.clients = []                 # Registered, in registration order (manager->clients)
        self.refused = []                 # {"client", "path", "error", "reason"}: registrations refused

    # ------------------------------------------------------------ the manager's properties
    def max_instances(self):
        return max(0, min(255, self.sim.faults.get("adv_instances")))

    def properties(self):
        """The LEAdvertisingManager1 table of the adapter object. SupportedSecondaryChannels
        exists only with extended advertising (secondary_exists), which the simulated
        controller, like the real-bluetoothd rig's, has not; SupportedFeatures and
        SupportedCapabilities are experimental before 5.77."""
        extra = self.sim.adv_capabilities_exported()
        return {
            "ActiveInstances": ["y", len(self.clients)],
            "SupportedInstances": ["y", max(0, self.max_instances() - len(self.clients))],
            "SupportedIncludes": ["as", [name for name, _ in adv_data.INCLUDES]],
            "SupportedSecondaryChannels": ["as", None],
            "SupportedFeatures": ["as", [] if extra else None],
            "SupportedCapabilities": ["a{sv}", {"MaxAdvLen": dbus.Byte(adv_data.AD_MAX),
                                                "MaxScnRspLen": dbus.Byte(adv_data.AD_MAX)} if extra else None],
        }

    def _emit_counts(self):
        """add_adv_callback / client_remove: PropertiesChanged of SupportedInstances and
        ActiveInstances (two signals, as g_dbus_emit_property_changed sends them)."""
        ad = self.sim.adapter
        if ad is None:
            return
        self.sim.bus.set_props(ad.obj, MANAGER, {"SupportedInstances": max(0, self.max_instances() - len(self.clients))})
        self.sim.bus.set_props(ad.obj, MANAGER, {"ActiveInstances": len(self.clients)})

    def _find(self, owner, path):
        return next((c for c in self.clients if c.owner == owner and c.path == path), None)

    def _free_instance(self):
        used = {c.instance for c in self.clients}
        return next((i for i in range(1, self.max_instances() + 1) if i not in used), None)

    # ------------------------------------------------------------ methods
    def m_RegisterAdvertisement(self, call, path, options):
        path = str(path)
        if self._find(call.sender, path) is not None:
            raise DBusError(ERR + "AlreadyExists", "Already Exists")
        instance = self._free_instance()
        if instance is None:
            raise DBusError(ERR + "NotPermitted", "Maximum advertisements reached")
        reg = Registered(call.sender, path, instance, call)
        self.clients.append(reg)          # counted at once (queue_push_tail before parsing)
        self._read_object(reg)

    def m_UnregisterAdvertisement(self, call, path):
        reg = self._find(call.sender, str(path))
        if reg is None:
            raise DBusError(ERR + "DoesNotExist", "Does Not Exist")
        self._remove(reg, release=False)
        call.reply()

    # ------------------------------------------------------------ registration
    def _read_object(self, reg):
        """GDBusClient: GetManagedObjects on the advertisement's own path (its root), then
        GetAll of LEAdvertisement1; either may fail. The properties come from the
        GetManagedObjects reply when it lists the object, else from GetAll; with neither
        (no such object), the proxy is still added with no properties at all and the
        advertisement registers as an empty broadcast one (get_all_properties_reply calls
        proxy_added on an error too)."""
        calls = self.sim.app_calls
        found = {}

        def managed(objects):
            props = dict(objects).get(dbus.ObjectPath(reg.path), {}).get(ADVERTISEMENT)
            if props is not None:
                found["props"] = props
            get_all()

        def get_all(*_):
            calls.call(reg.owner, reg.path, PROPS, "GetAll", "s", (ADVERTISEMENT,),
                       lambda props: self._parsed(reg, found.get("props", props)),
                       lambda *_: self._parsed(reg, found.get("props", {})), purpose="advertisement")
        calls.call(reg.owner, reg.path, OM, "GetManagedObjects", "", (), managed, get_all,
                   purpose="advertisement")

    def _adapter_view(self):
        ad = self.sim.adapter
        bredr = not self.sim.faults.get("le_only_adapter")
        discoverable = bool(ad and ad.obj.get("org.bluez.Adapter1", "Discoverable"))
        name = (ad.obj.get("org.bluez.Adapter1", "Alias") if ad else None) or "blesim-host"
        return bredr, discoverable, name

    def _parsed(self, reg, props):
        if reg not in self.clients or reg.call is None:
            return                        # unregistered or gone meanwhile
        bredr, discoverable, name = self._adapter_view()
        reg.props = dict(props)
        ad = adv_data.Advertisement(experimental=self.sim.experimental())
        problem = ad.parse(props, bredr, discoverable)
        if problem is not None:           # parse_advertisement
            return self._refuse(reg, "Failed to parse advertisement.", problem)
        packets, problem = adv_data.on_air(ad, bredr, discoverable, name)
        if packets is None:               # add_adv_params_callback: the kernel's budget
            return self._refuse(reg, "Failed to register advertisement", problem)
        reg.ad, reg.packets = ad, packets
        if ad.timeout:
            reg.timers.append(self.sim.later(ad.timeout * 1000, self._timed_out, reg))
        if ad.discoverable_timeout is not None:
            reg.timers.append(self.sim.later(ad.discoverable_timeout * 1000, self._discoverable_over, reg))
        call, reg.call = reg.call, None
        self._emit_counts()
        reg.watch = self.sim.app_calls.watch_properties(reg.owner, reg.path, lambda *a: self._changed(reg, *a))
        call.reply()

    def _refuse(self, reg, text, reason):
        self.refused.append({"client": reg.owner, "path": reg.path, "error": ERR + "Failed: " + text,
                             "reason": reason})
        self.clients.remove(reg)
        call, reg.call = reg.call, None
        call.error(ERR + "Failed", text)

    # ------------------------------------------------------------ while registered
    def _changed(self, reg, path, iface, changed, invalidated):
        """properties_changed: a property the client changes later is parsed again and the
        advertisement refreshed (a value the parser refuses is left out)."""
        if path != reg.path or iface != ADVERTISEMENT or reg.ad is None or reg not in self.clients:
            return
        bredr, discoverable, name = self._adapter_view()
        for prop, value in changed.items():
            if prop not in adv_data.Advertisement.PARSERS:
                continue
            trial = _copy(reg.ad)
            if getattr(trial, "p_" + prop)(value):
                trial.finish_flags(bredr, discoverable)
                packets, _ = adv_data.on_air(trial, bredr, discoverable, name)
                if packets is not None:
                    reg.ad, reg.packets = trial, packets
                    reg.props[prop] = value

    def _timed_out(self, reg):
        """client_timeout: Release, then removed."""
        if reg in self.clients:
            self._remove(reg, release=True)

    def _discoverable_over(self, reg):
        """client_discoverable_timeout: the Flags are cleared and the data refreshed."""
        if reg in self.clients and reg.ad is not None:
            reg.ad.data.pop(0x01, None)
            bredr, discoverable, name = self._adapter_view()
            packets, _ = adv_data.on_air(reg.ad, bredr, discoverable, name)
            if packets is not None:
                reg.packets = packets

    def _remove(self, reg, release):
        """client_remove (with client_release first when bluetoothd drops it itself)."""
        for t in reg.timers:
            self.sim.cancel(t)
        reg.timers.clear()
        unwatch(reg.watch)
        reg.watch = None
        if reg in self.clients:
            self.clients.remove(reg)
        if release:
            self.sim.app_calls.send(reg.owner, reg.path, ADVERTISEMENT, "Release", purpose="advertisement")
        if reg.call is None:
            self._emit_counts()

    def release(self, path):
        """The control ReleaseAdvertisement: bluetoothd drops the advertisement at `path`
        (every client's), Release first. Returns how many."""
        regs = [c for c in self.clients if c.path == path and c.active]
        for reg in regs:
            self._remove(reg, release=True)
        return len(regs)

    def release_all(self):
        """manager_destroy (the adapter removed, bluetoothd stopping): Release each."""
        for reg in list(self.clients):
            if reg.call is not None:
                self.clients.remove(reg)
                c, reg.call = reg.call, None
                c.error(ERR + "Failed", "Failed to complete registration")   # client_free
            else:
                self._remove(reg, release=True)

    def client_left(self, owner):
        """client_disconnect_cb: removed without Release (nobody to tell)."""
        for reg in [c for c in self.clients if c.owner == owner]:
            if reg.call is not None:
                reg.call.done = True
                reg.call.record["outcome"] = "dropped"
                reg.call = None
                self.clients.remove(reg)
            else:
                self._remove(reg, release=False)

    def forget(self):
        """bluetoothd is gone (crashed, or a reset): nothing registered, nobody told."""
        for reg in self.clients:
            for t in reg.timers:
                self.sim.cancel(t)
            unwatch(reg.watch)
        self.clients.clear()

    def clear(self):
        self.forget()
        self.refused.clear()

    # ------------------------------------------------------------ state
    def state(self):
        powered = bool(self.sim.adapter and self.sim.adapter.powered)
        return [describe(reg, powered) for reg in self.clients if reg.active]


def _copy(ad):
    new = adv_data.Advertisement(ad.experimental)
    new.__dict__.update({k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v)
                         for k, v in ad.__dict__.items()})
    return new


def describe(reg, powered):
    """One advertisement as the state shows it: the fields decoded and the bytes on air."""
    ad = reg.ad
    adv, scan = reg.packets
    flags = ad.data.get(0x01)
    return {
        "client": reg.owner, "path": reg.path, "instance": reg.instance, "type": ad.type,
        "service_uuids": [adv_data.uuid_text(u) for u in ad.service_uuids],
        "solicit_uuids": [adv_data.uuid_text(u) for u in ad.solicit_uuids],
        "manufacturer_data": {"0x%04x" % k: v.hex() for k, v in ad.manufacturer_data.items()},
        "service_data": {adv_data.uuid_text(u): v.hex() for u, v in ad.service_data},
        "data": {"0x%02x" % k: v.hex() for k, v in ad.data.items() if k != 0x01},
        "flags": flags[0] if flags else None,
        "includes": [name for name, bit in adv_data.INCLUDES if ad.flags & bit],
        "local_name": ad.name, "appearance": ad.appearance, "duration": ad.duration, "timeout": ad.timeout,
        "discoverable_timeout": ad.discoverable_timeout,
        "min_interval_ms": ad.min_interval * 0.625 if ad.min_interval else None,
        "max_interval_ms": ad.max_interval * 0.625 if ad.max_interval else None,
        "tx_power": ad.tx_power,
        "adv_data": adv.hex(), "scan_response": scan.hex(),
        "adv_structures": adv_data.structures(adv), "scan_structures": adv_data.structures(scan),
        "on_air": powered,
    }
