"""Device1.Connect as bluetoothd 5.66 does it (mixed into device.Device): LE (the link up,
then GATT objects exported and ServicesResolved, Battery1 with them) or BR/EDR for a
dual-mode device, the faults that fail, hold or abort it, and a device already connected
at start-up (preconnect). The LE link itself is created when the adapter's LeConnector
gives the device its turn (create_le_link), after connect_latency_ms."""

import time

from .call import DBusError
from .ifaces import ERR
from .le_connector import LIMIT
from .notify import REARM_MS
from .world import norm_uuid

CONNECT_MS = 100
GATT_EXPORT_MS = 50
RESOLVE_MS = 150
ABORT_MS = 60
BR_SDP_MS = 120          # BR/EDR: the SDP search after the ACL is up
BR_IDLE_MS = 2000        # the kernel drops an ACL with no L2CAP channel (HCI_DISCONN_TIMEOUT)


class DeviceConnect:
    """Expects of the Device: sim, spec, obj, connected, services_resolved, connected_by,
    preconnected, connect_call, connect_timers, link_timers, disconnecting, pairing, removed,
    gatt, gatt_exported, battery_exported, le_svc_resolved, bredr_seen, bearer, set(),
    _later(), _cancel(), select_bearer(), abort_everything(), link_lost()."""

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
        msg = f.get("connect_fail_once")
        if msg:
            f.set("connect_fail_once", "")
        else:
            msg = f.get("connect_fail")
        if msg:
            self._later(self.connect_timers, CONNECT_MS, self._connect_failed, msg)
            return
        self.sim.le_connector.request(self)

    def heard(self):
        """Whether the scan hears it: a connectable device that advertises."""
        return self.spec.connectable and self.sim.is_advertising(self.spec.address)

    def create_le_link(self):
        """The device's turn at the controller (LeConnector): the link comes up after
        connect_latency_ms, or the attempt fails. A device that does not advertise (no turn
        of its own) fails when the attempt times out (connect_timeout_ms); abort-once (a
        device fault) fails with the remote's abort."""
        f = self.sim.faults
        if f.get("le_create_held"):
            self.le_create_held = True     # goes on when the fault is cleared (release_held_creation)
            return
        latency = f.get("connect_latency_ms")
        address = self.spec.address
        if not self.heard():
            self._later(self.connect_timers, f.get("connect_timeout_ms"), self._connect_failed,
                        "le-connection-abort-by-local")
        elif self.sim.take_device_fault(address, "abort-once"):
            self._later(self.connect_timers, latency, self._connect_failed, "le-connection-abort-by-remote")
        elif f.consume_once("connect_abort_once") or f.consume_count("connect_abort_times"):
            self._later(self.connect_timers, latency, self._abort_up)
        else:
            self._later(self.connect_timers, latency, self._link_up)

    def release_held_creation(self):
        """le_create_held cleared: a creation held at its start goes on, its latency counted
        from now; one given up meanwhile (Disconnect) stays given up."""
        if getattr(self, "le_create_held", False):
            self.le_create_held = False
            if self in self.sim.le_connector.creating:
                self.create_le_link()

    def refuse_le_link(self):
        """The controller refused the creation (le_max_links reached)."""
        record = self.sim.le_connector.records.get(self)
        if record is not None and record["result"] == LIMIT:
            self._connect_failed("le-connection-abort-by-local")

    def _connect_failed(self, msg):
        self._cancel(self.connect_timers)
        self.sim.le_connector.done(self, msg)
        call, self.connect_call = self.connect_call, None
        if call is not None:
            call.error(ERR + "Failed", msg)

    def _abort_up(self):
        self.connected = True
        self.connected_by = self.connect_call.sender if self.connect_call else None
        self.set(Connected=True)
        self.sim.le_connector.done(self, "le-connection-abort-by-local")   # the link counts: up
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
        self.sim.le_connector.done(self, "connected")     # after: the new link counts
        if call is not None:
            call.reply()
        if self.sim.faults.get("remove_device_during_resolve") or \
                self.sim.has_device_fault(self.spec.address, "vanish-after-connect"):
            self._later(self.link_timers, 30, self._vanish)
            return
        self._resolve()

    def _vanish_during_connect(self):
        # bluetoothd frees the device with the Connect message unanswered (device_free).
        self._cancel(self.connect_timers)
        self.sim.le_connector.done(self, "cancelled")
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
        if self.sim.take_device_fault(self.spec.address, "drop-once"):
            self.link_lost(reason="remote")     # the device went away during GATT discovery
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
        uuids = sorted(set(self.spec.uuids) | {s.uuid for s in self.gatt.service_specs})
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
        if not self.paired and self.sim.has_device_fault(self.spec.address, "needs-pairing"):
            return      # the battery plugin's read of 0x2A19 failed
        self.battery_exported = True
        self.sim.bus.add_iface(self.obj, "org.bluez.Battery1",
                               {"Percentage": ["y", self.spec.battery1],
                                "Source": ["s", self.spec.battery1_source if self.sim.battery_source_exported() else None]})

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
        uuids = sorted(set(self.spec.uuids) | {s.uuid for s in self.gatt.service_specs})
        self.set(UUIDs=uuids, ServicesResolved=True)
        if self.spec.battery1 is not None:
            self._add_battery()

    def abandon_connect(self):
        """A connection Pair was bringing up is given up (CancelPairing, the caller gone):
        no reply to anyone, the attempt stops."""
        self._cancel(self.connect_timers)
        self.sim.le_connector.done(self, "cancelled")
        self.connect_call = None
        if self.connected:      # connect_abort_once window: the link is up briefly
            self.connected = False
            self.connected_by = None
            self.set(Connected=False)
