"""Notify sessions of a characteristic (mixed into characteristic.Char): StartNotify and
StopNotify per client as BlueZ 5.66 keeps them (over a link loss too, re-enabled by
rearm()), the values sent as notifications (the cached Value, or an acquired notify
socket), bursts, and the vendor status notifications."""

from .call import DBusError
from .gatt_errors import in_progress
from .ifaces import ERR
from .world import norm_uuid

STATUS_MS = 300
REARM_MS = 20                 # a kept notify session is re-enabled this long after ServicesResolved (the CCC write)


class NotifySessions:
    """Expects of the Char: sim, device, spec, role, obj, value, notify_clients,
    pending_notify, status_timer, rearm_pending, notify_io, tree, set(), _check(), _later(),
    _drop_link_later(), start_ticker(), stop_ticker()."""

    # ------------------------------------------------------------ notifications
    def m_StartNotify(self, call):
        if self.device.connected and self.device.disconnecting:
            # BlueZ 5.66 characteristic_start_notify: "Device is disconnecting.
            # StartNotify is not allowed." (seen on the real bluetoothd, make test-real)
            raise DBusError(ERR + "NotConnected", "Not Connected")
        if call.sender in self.notify_clients and self.rearm_pending and not self.device.disconnecting:
            # A session kept over a link loss, not re-registered yet: BlueZ 5.66 answers
            # InProgress (its notify_id is 0) whether the link is back or not.
            raise in_progress()
        self._check()
        if self.notify_io is not None:
            raise DBusError(ERR + "NotPermitted", "Notify acquired")
        if "notify" not in self.spec.flags and "indicate" not in self.spec.flags:
            raise DBusError(ERR + "NotSupported", "Operation is not supported")
        if call.sender in self.notify_clients:
            call.reply()
            return
        if call.sender in self.pending_notify:
            raise in_progress()
        if self.tree.service_changed_by(self, call):
            return
        f = self.sim.faults
        if f.get("start_notify_never_answers"):
            # Registered at once (the client leaving drops it; StopNotify answers InProgress),
            # never answered: the CCC write got no response.
            self.pending_notify[call.sender] = call
            return
        if f.get("drop_link_on") == "StartNotify":
            self.pending_notify[call.sender] = call
            self._drop_link_later(call)
            return
        if f.get("start_notify_held"):
            # Like start_notify_delay_ms, but until the test clears the fault.
            call.held = True
            self.pending_notify[call.sender] = call
            return
        delay = f.get("start_notify_delay_ms")
        if delay > 0:
            # BlueZ registers the notify client (with its disconnect watch) at once and
            # answers when the CCC write completes.
            self.pending_notify[call.sender] = call
            self._later(delay, self._start_notify_now, call)
            return
        self._start_notify_now(call)

    def release_held(self):
        """start_notify_held cleared: the held StartNotify calls are answered now."""
        for call in [c for c in self.pending_notify.values() if getattr(c, "held", False)]:
            call.held = False
            self._start_notify_now(call)

    def _start_notify_now(self, call):
        if self.pending_notify.get(call.sender) is call:
            del self.pending_notify[call.sender]
        if getattr(call, "client_gone", False):
            return
        if not self.device.connected or self.device.removed:
            call.error(ERR + "Failed", "Not connected")
            return
        first = not self.notify_clients
        self.notify_clients.add(call.sender)
        if first:
            self.set(Notifying=True)
            self.start_status()
            self.start_ticker()
        call.reply()
        self.burst_on_start()

    def burst_on_start(self):
        """notify_burst: the burst right after notifications are turned on (StartNotify or
        AcquireNotify answered)."""
        n = self.sim.faults.get("notify_burst")
        want = self.sim.faults.get("notify_burst_char")
        if n > 0 and (not want or norm_uuid(want) == self.spec.uuid):
            self.burst(n)

    def active(self):
        """Whether notifications reach the sessions now: some session (or an acquired notify
        socket), the link up, and the sessions kept over a link loss re-enabled."""
        if self.notify_io is not None:
            return self.device.connected and not self.device.removed
        return bool(self.notify_clients and self.device.connected and not self.device.removed
                    and not self.rearm_pending)

    def burst(self, count):
        """count distinct notifications back to back: value i is i as 4 bytes big-endian,
        i = 1..count. Returns False when notifications are off (nothing sent)."""
        if self.notify_io is not None and self.device.connected and not self.device.removed:
            for i in range(1, count + 1):
                self.notify_io.send(i.to_bytes(4, "big"))
            return True
        if not self.active():
            return False
        self.notify_many([i.to_bytes(4, "big") for i in range(1, count + 1)], counter=True)
        return True

    def m_StopNotify(self, call):
        if call.sender in self.pending_notify:
            raise in_progress()
        if call.sender not in self.notify_clients:
            raise DBusError(ERR + "Failed", "No notify session started")
        self.notify_clients.discard(call.sender)
        call.reply()
        if not self.notify_clients:
            self._notify_off()

    def _notify_off(self):
        self.sim.cancel(self.status_timer)
        self.status_timer = None
        self.stop_ticker()
        self.rearm_pending = False
        if self.obj.get("org.bluez.GattCharacteristic1", "Notifying"):
            self.set(Notifying=False)

    def start_status(self):
        """The vendor device's status notification every STATUS_MS while its CCC is enabled
        (a StartNotify session or an acquired socket): the device sends it, whoever asked."""
        if self.role == "vendor_rsp" and self.status_timer is None and not self.sim.faults.get("no_status_notification"):
            self.status_timer = self.sim.every(STATUS_MS, self._status)

    def _status(self):
        if not (self.notify_clients or self.notify_io is not None) or not self.device.connected:
            self.status_timer = None
            return False
        self.notify(b"\x90\x00")
        return True

    def notify(self, data, counter=False):
        """A notification of data: BlueZ's cached Value changes. The attribute's own value
        (what ReadValue answers) changes too, but not for counter values (the tickers and
        bursts, test traffic): a battery level still reads as the documented level after
        notify_every_ms was used."""
        if self.notify_io is not None:
            # Acquired: the notification goes to the socket; Value is not updated (BlueZ doc).
            if self.device.connected and not self.device.removed:
                self.notify_io.send(data)
            return
        if self.active():
            if not counter:
                self.value = bytes(data)
            self.set(Value=bytes(data))

    def notify_many(self, values, counter=False):
        """Notifications of each value, in order, sent back to back (messages built first);
        counter as for notify."""
        if self.notify_io is not None:
            for v in values:
                self.notify(v, counter)
            return
        if not self.active():
            return
        bus = self.sim.bus
        msgs = []
        for v in values:
            if not counter:
                self.value = bytes(v)
            msgs.append(bus.prepare_props(self.obj, "org.bluez.GattCharacteristic1", {"Value": bytes(v)}, force=True))
        bus.send_back_to_back(msgs)

    def rearm(self):
        """GATT is back after a link loss: the kept sessions are re-enabled (BlueZ 5.66
        re-registers them when its GATT client is ready), without a new StartNotify."""
        if not self.rearm_pending:
            return
        self.rearm_pending = False
        if not self.notify_clients:
            return
        if self.role == "vendor_rsp" and self.status_timer is None:
            self.status_timer = self.sim.every(STATUS_MS, self._status)
        self.start_ticker()
