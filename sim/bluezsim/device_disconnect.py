"""The LE link going down (mixed into device.Device): Disconnect with BlueZ 5.66's disconnect
timer, a link lost (GATT calls failed, notify sessions ended or kept, ServicesResolved and
Connected false, Battery1 removed), the control DropLink, and a device object going away."""

from .disconnect_reason import signal_disconnected
from .ifaces import ERR


class DeviceDisconnect:
    """Expects of the Device: sim, spec, obj, connected, services_resolved, connected_by,
    preconnected, connect_call, connect_timers, link_timers, disconnecting,
    disconnect_waiters, disconnect_timer, pairing, removed, gatt, battery_exported,
    le_svc_resolved, bearer, set(), _cancel(), _connect_failed()."""

    # ------------------------------------------------------------ Disconnect
    def m_Disconnect(self, call):
        if self.connect_call is not None:
            self._cancel(self.connect_timers)
            self.sim.le_connector.done(self, "cancelled")
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
            signal_disconnected(self, reason)
            self.set(Connected=False)
        if self.pairing is not None and self.pairing.stage not in ("connecting", "held"):
            self.pairing.cancel()        # the bonding ends with the link (MGMT_STATUS_DISCONNECTED)
        if self.battery_exported:
            self.battery_exported = False
            if not self.removed:
                self.sim.bus.remove_iface(self.obj, "org.bluez.Battery1")
        if was and self.on_link_lost is not None:
            self.on_link_lost(reason)
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
        self.link_lost(reason="timeout", keep_notify=not remove)
        if remove:
            self.abort_everything()
            self.sim.remove_device(self)
        return True

    def abort_everything(self):
        """The device object is going away (RemoveDevice, adapter removed, vanish)."""
        if self.pairing is not None:
            self.pairing.cancel()
        self._cancel(self.connect_timers)
        self.sim.le_connector.done(self, "cancelled")
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
        self.sim.le_connector.done(self, "cancelled")
        self._cancel(self.link_timers)
        self.disconnect_timer = None
        self.connected = False
        self.bearer = None
        self.connected_by = None
        self.preconnected = False
        self.disconnecting = False
        self.services_resolved = False
