"""org.bluez.Device1 objects: advertising data, the LE connection life cycle
(Connect, service resolution, Battery1, Disconnect with BlueZ's timer) and faults."""

import time

from .bus import Obj, DBusError
from .ifaces import ERR
from .gatt import GattTree
from .notify import REARM_MS
from .world import icon_for, norm_uuid
from .pairing import Pairing

CONNECT_MS = 100
GATT_EXPORT_MS = 50
RESOLVE_MS = 150
ABORT_MS = 60
BR_SDP_MS = 120          # BR/EDR: the SDP search after the ACL is up
BR_IDLE_MS = 2000        # the kernel drops an ACL with no L2CAP channel (HCI_DISCONN_TIMEOUT)
SEEN_THRESHOLD_S = 300   # BlueZ 5.66 src/device.c SEEN_TRESHHOLD


def alias_for(spec):
    return spec.name if spec.name else spec.address.replace(":", "-")


class Device:
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
            "AdvertisingFlags": ["ay", spec.adv_flags if adv else None],
        }
        if adv and spec.uuids and sim.faults.get("uuids_in_scan_response"):
            # The kernel reported the advertisement and its scan response separately: the
            # service UUIDs (carried in the scan response) arrive as a later change.
            self.sim.later(100, lambda: None if (self.removed or self.le_svc_resolved) else self.set(UUIDs=list(spec.uuids)))
        o.handlers["org.bluez.Device1"] = self
        o.writable["org.bluez.Device1"] = {"Trusted": self._set_trusted, "Blocked": self._set_blocked,
                                           "Alias": self._set_alias}

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
        self.set(Alias=value or alias_for(self.spec))

    # ------------------------------------------------------------ Connect
    def m_Connect(self, call):
        f = self.sim.faults
        ad = self.sim.adapter
        if ad is None or not ad.powered:
            raise DBusError(ERR + "NotReady", "Resource Not Ready")
        if self.spec.dual and self.select_bearer() == "bredr":
            self._connect_bredr(call)
            return
        if self.connected:
            call.reply()     # BlueZ 5.66 dev_connect: LE already connected -> plain reply
            return
        if self.connect_call is not None:
            raise DBusError(ERR + "Failed", "Operation already in progress")   # -EALREADY
        if f.get("connect_in_progress"):
            raise DBusError(ERR + "InProgress", "In Progress")
        self.connect_call = call
        self.sim.connects.append({"address": self.spec.address, "bearer": "le"})
        if f.get("connect_never_answers"):
            return
        if f.get("connect_held"):
            call.held = True     # answered as usual once the fault is cleared (release_held_connect)
            return
        self._proceed_connect()

    def _connect_bredr(self, call):
        """Device1.Connect over BR/EDR (BlueZ 5.66 connect_profiles): with the ACL up and SDP
        done, no profile to connect fails at once; else the ACL comes up (Connected true, the
        BR/EDR bearer seen), SDP finds no profile bluetoothd connects, ServicesResolved
        turns true (svc_refreshed: no GATT objects) and Connect fails NotAvailable
        "br-connection-profile-unavailable". The idle ACL drops BR_IDLE_MS later."""
        if self.connect_call is not None:
            raise DBusError(ERR + "InProgress", "br-connection-busy")
        if self.connected:
            raise DBusError(ERR + "NotAvailable", "br-connection-profile-unavailable")
        self.connect_call = call
        self.sim.connects.append({"address": self.spec.address, "bearer": "bredr"})
        self._later(self.connect_timers, CONNECT_MS, self._bredr_acl_up)

    def _bredr_acl_up(self):
        self.connected = True
        self.bearer = "bredr"
        self.connected_by = self.connect_call.sender if self.connect_call else None
        self.bredr_seen = int(time.time())      # device_add_connection
        self.set(Connected=True)
        self._later(self.connect_timers, BR_SDP_MS, self._bredr_sdp_done)

    def _bredr_sdp_done(self):
        self.connect_timers.clear()
        self.services_resolved = True
        self.set(UUIDs=sorted(set(self.spec.sdp_uuids)), ServicesResolved=True)
        call, self.connect_call = self.connect_call, None
        if call is not None:
            call.error(ERR + "NotAvailable", "br-connection-profile-unavailable")
        self._later(self.link_timers, BR_IDLE_MS, self._bredr_idle)

    def _bredr_idle(self):
        if self.connected and self.bearer == "bredr" and not self.disconnecting:
            self.link_lost("remote")

    def release_held_connect(self):
        """connect_held cleared: a held Connect goes on as if it had just been called."""
        if self.connect_call is not None and getattr(self.connect_call, "held", False):
            self.connect_call.held = False
            self._proceed_connect()

    def _proceed_connect(self):
        f = self.sim.faults
        if f.consume_once("remove_device_during_connect_once") or f.consume_count("remove_device_during_connect_times"):
            self._later(self.connect_timers, 300, self._vanish_during_connect)
            return
        msg = f.get("connect_fail")
        if msg:
            self._later(self.connect_timers, CONNECT_MS, self._connect_failed, msg)
            return
        if not self.spec.connectable or not self.sim.is_advertising(self.spec.address):
            self._later(self.connect_timers, f.get("connect_timeout_ms"), self._connect_failed,
                        "le-connection-abort-by-local")
            return
        if f.consume_once("connect_abort_once") or f.consume_count("connect_abort_times"):
            self._later(self.connect_timers, CONNECT_MS, self._abort_up)
            return
        self._later(self.connect_timers, CONNECT_MS, self._link_up)

    def _connect_failed(self, msg):
        self._cancel(self.connect_timers)
        call, self.connect_call = self.connect_call, None
        if call is not None:
            call.error(ERR + "Failed", msg)

    def _abort_up(self):
        self.connected = True
        self.connected_by = self.connect_call.sender if self.connect_call else None
        self.set(Connected=True)
        self._later(self.connect_timers, ABORT_MS, self._abort_down)

    def _abort_down(self):
        self.connected = False
        self.connected_by = None
        self.set(Connected=False)
        self._connect_failed("le-connection-abort-by-local")

    def _link_up(self):
        self.connect_timers.clear()
        call, self.connect_call = self.connect_call, None
        self.connected = True
        self.bearer = "le"
        self.connected_by = call.sender if call else None
        self.set(Connected=True)
        if call is not None:
            call.reply()
        if self.sim.faults.get("remove_device_during_resolve"):
            self._later(self.link_timers, 30, self._vanish)
            return
        self._resolve()

    def _vanish_during_connect(self):
        # bluetoothd frees the device with the Connect message unanswered (device_free).
        self._cancel(self.connect_timers)
        self.connect_call = None
        self.sim.remove_device(self)

    def _vanish(self):
        self.abort_everything()
        self.sim.remove_device(self)

    def _resolve(self):
        f = self.sim.faults
        if self.gatt_exported:
            self._later(self.link_timers, RESOLVE_MS, self._resolved)
            return
        if f.get("services_resolved_never"):
            return
        late = f.get("services_resolved_before_gatt_ms")
        if late > 0:
            self._later(self.link_timers, RESOLVE_MS, self._resolved)
            self._later(self.link_timers, RESOLVE_MS + late, self._export_gatt)
            return
        self._later(self.link_timers, GATT_EXPORT_MS, self._export_gatt)
        self._later(self.link_timers, RESOLVE_MS, self._resolved)

    def _export_gatt(self):
        if self.gatt_exported or self.removed:
            return
        self.gatt_exported = True
        self.sim.bus.export_many(self.gatt.objects())

    def _resolved(self):
        if not self.connected or self.removed:
            return
        self.services_resolved = True
        self.le_svc_resolved = True
        # Battery1 comes with the resolution: BlueZ 5.66's battery plugin reads the level as
        # the services are probed, and on a real bluetoothd (make test-real) Battery1 was
        # there every time a client looked right after ServicesResolved.
        if self.spec.battery1 is not None:
            self._add_battery()
        changing = self.sim.faults.get("service_changed_at_resolution")
        if changing:
            index = self.gatt.service_uuid_index(norm_uuid(changing))
            if index is not None:
                self.sim.set_fault("service_changed_at_resolution", "")     # once
                self.gatt.service_changed(index)
        uuids = sorted(set(self.spec.uuids) | {s.uuid for s in self.spec.services})
        self.set(UUIDs=uuids, ServicesResolved=True)
        # When (CLOCK_MONOTONIC): the state's `resolved_at`, for the benchmarks.
        self.sim.resolved_at[self.spec.address] = time.monotonic()
        # Notify sessions kept over a link loss (DropLink) are re-enabled by bluetoothd
        # itself once its GATT client is ready: the CCC writes follow the resolution.
        self._later(self.link_timers, REARM_MS, self.gatt.rearm)
        if self.pairing is not None:
            self.pairing.services_resolved()     # a Pair waiting for the services is answered

    def _add_battery(self):
        if not self.connected or self.battery_exported or self.removed:
            return
        self.battery_exported = True
        self.sim.bus.add_iface(self.obj, "org.bluez.Battery1",
                               {"Percentage": ["y", self.spec.battery1], "Source": ["s", self.spec.battery1_source]})

    def preconnect(self):
        if self.connected:
            self.preconnected = True
            return
        self.connected = True
        self.preconnected = True
        self.connected_by = None
        self._export_gatt()
        self.set(Connected=True)
        self.services_resolved = True
        self.le_svc_resolved = True
        uuids = sorted(set(self.spec.uuids) | {s.uuid for s in self.spec.services})
        self.set(UUIDs=uuids, ServicesResolved=True)
        if self.spec.battery1 is not None:
            self._add_battery()

    # ------------------------------------------------------------ Disconnect
    def m_Disconnect(self, call):
        if self.connect_call is not None:
            self._cancel(self.connect_timers)
            pending, self.connect_call = self.connect_call, None
            pending.error(ERR + "Failed", "br-connection-canceled")
            if self.connected:      # connect_abort_once window: link is up briefly
                self.connected = False
                self.connected_by = None
                self.set(Connected=False)
        if not self.connected:
            call.reply()
            return
        self.request_disconnect(call)

    def request_disconnect(self, waiter, on_done=None):
        if waiter is not None:
            self.disconnect_waiters.append(waiter)
        if on_done is not None:
            self.disconnect_waiters.append(on_done)
        if self.disconnecting:
            return
        self.disconnecting = True
        self._cancel(self.link_timers)
        # ServicesResolved stays true until the link is down (link_lost): BlueZ 5.66 clears
        # it in device_remove_connection, not when Disconnect is asked.
        if self.sim.faults.get("disconnect_held"):
            return       # release_held_disconnect, when the fault is cleared
        self.disconnect_timer = self.sim.later(self.sim.faults.get("disconnect_delay_ms"), self._disconnect_done)

    def release_held_disconnect(self):
        """disconnect_held cleared: a disconnection held midway completes now."""
        if self.disconnecting and self.disconnect_timer is None:
            self._disconnect_done()

    def _disconnect_done(self):
        self.disconnect_timer = None
        self.link_lost()

    def link_lost(self, reason="local", keep_notify=False):
        """The LE link is gone: fail GATT operations, end notify sessions (keep them with
        keep_notify, as BlueZ 5.66 does: see drop_link), ServicesResolved=false,
        Connected=false, drop Battery1, answer Disconnect."""
        self._cancel(self.link_timers)
        self.sim.cancel(self.disconnect_timer)
        self.disconnect_timer = None
        if reason == "power" and self.connect_call is not None:
            self._connect_failed("le-connection-abort-by-local")
        self.gatt.link_lost(keep_notify)
        if self.services_resolved:
            self.services_resolved = False
            self.set(ServicesResolved=False)
        was = self.connected
        over_bredr = self.bearer == "bredr"
        self.connected = False
        self.bearer = None
        self.connected_by = None
        self.preconnected = False
        self.disconnecting = False
        if was and not over_bredr and not self.le_svc_resolved and self.sim.faults.get("uuids_lost_after_failed_resolution"):
            # GATT discovery failed with the link: BlueZ 5.66 still marks the services
            # resolved (device_svc_resolved), with none found.
            self.le_svc_resolved = True
            self.set(UUIDs=[])
        if was:
            self.set(Connected=False)
        if self.pairing is not None and self.pairing.stage not in ("connecting", "held"):
            self.pairing.cancel()        # the bonding ends with the link (MGMT_STATUS_DISCONNECTED)
        if self.battery_exported:
            self.battery_exported = False
            if not self.removed:
                self.sim.bus.remove_iface(self.obj, "org.bluez.Battery1")
        waiters, self.disconnect_waiters = self.disconnect_waiters, []
        for w in waiters:
            if callable(w):
                w()
            else:
                w.reply()

    def drop_link(self, remove=False):
        """Control DropLink: the link drops as when the device goes out of range
        (supervision timeout): GATT calls in flight fail, ServicesResolved=false,
        Connected=false. As in BlueZ 5.66 (src/gatt-client.c), StartNotify sessions are
        kept (Notifying stays true) and re-enabled after the next Connect once services are
        resolved, without a new StartNotify; a StartNotify from a kept session's client
        answers InProgress until then. With remove, the device object goes too (as BlueZ
        does with a temporary device): its sessions end with it, and it is back when
        discovered again. Returns False when the device was not connected."""
        if not self.connected:
            return False
        self.link_lost(reason="remote", keep_notify=not remove)
        if remove:
            self.abort_everything()
            self.sim.remove_device(self)
        return True

    def abort_everything(self):
        """The device object is going away (RemoveDevice, adapter removed, vanish)."""
        if self.pairing is not None:
            self.pairing.cancel()
        self._cancel(self.connect_timers)
        self._cancel(self.link_timers)
        self.sim.cancel(self.disconnect_timer)
        if self.connect_call is not None:
            c, self.connect_call = self.connect_call, None
            c.error(ERR + "Failed", "le-connection-abort-by-local")
        self.gatt.link_lost()
        self.connected = False
        self.disconnecting = False

    def drop_link_silently(self):
        """bluetoothd is gone (nothing can be signalled): the link is down, nobody holds it."""
        self._cancel(self.connect_timers)
        self._cancel(self.link_timers)
        self.disconnect_timer = None
        self.connected = False
        self.bearer = None
        self.connected_by = None
        self.preconnected = False
        self.disconnecting = False
        self.services_resolved = False

    def forget_calls(self):
        self.connect_call = None
        self.pairing = None
        self.disconnect_waiters = []
        self.gatt.forget_calls()

    def client_left(self, sender):
        self.gatt.client_left(sender)
        if self.pairing is not None and self.pairing.call.sender == sender:
            self.pairing.requester_left()

    def abandon_connect(self):
        """A connection Pair was bringing up is given up (CancelPairing, the caller gone):
        no reply to anyone, the attempt stops."""
        self._cancel(self.connect_timers)
        self.connect_call = None
        if self.connected:      # connect_abort_once window: the link is up briefly
            self.connected = False
            self.connected_by = None
            self.set(Connected=False)

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
