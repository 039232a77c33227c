"""org.bluez.GattCharacteristic1 objects: ReadValue, WriteValue (the vendor command protocol,
the echo device's sink), AcquireWrite/AcquireNotify (acquire.py), and what a lost link or a
client leaving does to the calls in flight. Notify sessions: notify.py; the simulator's own
notification streams: notify_ticker.py."""

from .bus import Obj
from .call import DBusError
from .dbus_types import dbus_bytes
from .claimed import refuse_write_if_claimed
from .descriptor import Desc
from .gatt_errors import in_progress, not_connected
from .gatt_layout import char_path, has_ccc
from .ifaces import ERR
from .notify import NotifySessions
from .notify_ticker import NotifyTicker
from . import acquire

OP_MS = 15
NOTIFY_MS = 10
MTU = 247                     # the default ATT MTU (fault att_mtu, which every MTU use reads)
UNSOLICITED = b"\x7f\x00"     # unsolicited_after_answer: unrelated to any command
# GattCharacteristic1.Flags in BlueZ 5.66's order (src/gatt-client.c chrc_props, then
# chrc_ext_props): the characteristic's property bits from 0x01 up, whatever order a
# world's CharSpec lists them in. Anything else keeps its place, after these.
FLAG_ORDER = ["broadcast", "read", "write-without-response", "write", "notify", "indicate",
              "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries"]


def bluez_flag_order(flags):
    known = [f for f in FLAG_ORDER if f in flags]
    return known + [f for f in flags if f not in FLAG_ORDER]


class Char(NotifySessions, NotifyTicker):
    def __init__(self, tree, svc_path, spec, handle):
        self.tree = tree
        self.sim = tree.sim
        self.spec = spec
        self.role = spec.role
        self.value = bytes(spec.value)
        self.path = char_path(svc_path, handle)
        self.busy = None              # the Call in flight (ReadValue / WriteValue)
        self.notify_clients = set()
        self.pending_notify = {}      # sender -> StartNotify call not answered yet (start_notify_delay_ms)
        self.status_timer = None
        self.ops = []                 # timers of operations in flight
        self.write_io = None          # acquire.WriteSocket while AcquireWrite holds the characteristic
        self.notify_io = None         # acquire.NotifySocket while AcquireNotify does
        # DropLink keeps the notify sessions (BlueZ 5.66 keeps a StartNotify session over a
        # link loss and re-registers it once GATT is back): until then they are not active.
        self.rearm_pending = False
        self.ticker = None            # notify_every_ms timer
        self.ticks = 0                # notify_every_ms: the last value sent (k as 4 bytes big-endian)
        self.obj = o = Obj(self.path)
        self.flags = list(spec.flags)
        if self.role == "vendor_rsp" and self.sim.faults.get("response_readable"):
            self.flags.insert(0, "read")
        self.flags = bluez_flag_order(self.flags)
        notifiable = has_ccc(spec)
        o.ifaces["org.bluez.GattCharacteristic1"] = {
            "UUID": ["s", spec.uuid],
            "Service": ["o", svc_path],
            "Value": ["ay", b""],
            "Notifying": ["b", False if notifiable else None],
            "Flags": ["as", list(self.flags)],
            "Handle": ["q", handle + 1 if self.sim.gatt_handles_exported() else None],
            "MTU": ["q", self.sim.faults.get("att_mtu")],
            # BlueZ exports these only where the flags allow the acquiring (gatt-client.c
            # characteristic_write_acquired_exists / characteristic_notify_acquired_exists).
            "WriteAcquired": ["b", False if "write-without-response" in self.flags else None],
            "NotifyAcquired": ["b", False if "notify" in self.flags else None],
        }
        o.handlers["org.bluez.GattCharacteristic1"] = self
        self.desc = None
        if notifiable:
            self.desc = Desc(self, handle + 2)
        first = handle + (3 if notifiable else 2)
        self.extra_descs = [Desc(self, first + i, uuid, value) for i, (uuid, value) in enumerate(spec.descriptors)]

    @property
    def device(self):
        return self.tree.device

    def set(self, **kw):
        if not self.device.removed:
            self.sim.bus.set_props(self.obj, "org.bluez.GattCharacteristic1", kw, force="Value" in kw)

    def current_value(self):
        if self.role == "battery_level":
            return bytes([self.device.spec.battery1 if self.device.spec.battery1 is not None else self.value[0]])
        return self.value

    def _check(self):
        # While bluetoothd's disconnect timer runs (Disconnect asked, link still up), 5.66
        # keeps its GATT client: reads and writes are still answered (StartNotify is not).
        if not self.device.connected:
            raise not_connected()

    def _later(self, ms, fn, *a):
        tid = self.sim.later(ms, fn, *a)
        self.ops.append(tid)
        return tid

    # ------------------------------------------------------------ ReadValue
    def m_ReadValue(self, call, options):
        self._check()
        if self.busy is not None:
            raise in_progress()
        if self.tree.service_changed_by(self, call):
            return
        offset = int(options.get("offset", 0))
        f = self.sim.faults
        self.busy = call
        if "read" not in self.flags:
            self._later(OP_MS, self._finish_error, call, ERR + "NotPermitted", "Read not permitted")
            return
        if self._needs_pairing(call):
            return
        if f.get("read_never_answers"):
            return
        if f.get("drop_link_on") == "ReadValue":
            self._drop_link_later(call)
            return
        if f.get("disconnect_mid_read"):
            self._later(200, self.device.link_lost, "remote")
            return
        self._later(OP_MS, self._finish_read, call, offset)

    def _needs_pairing(self, call):
        """A characteristic that wants encryption (role needs_pairing, or any of a device with
        the device fault needs-pairing) fails, as BlueZ maps ATT Insufficient
        Authentication/Encryption (gatt-client.c create_gatt_dbus_error), until Paired."""
        if self.device.paired or not (self.role == "needs_pairing" or
                                      self.sim.has_device_fault(self.device.spec.address, "needs-pairing")):
            return False
        self.busy = call
        self._later(OP_MS, self._finish_error, call, ERR + "NotPermitted", "Not paired")
        return True

    def _drop_link_later(self, call):
        """drop_link_on: the call stays unanswered; 200 ms later the link drops (signals
        first) and only then does the call fail."""
        def drop():
            if self.busy is call:
                self.busy = None
            self.pending_notify.pop(call.sender, None)
            self.device.link_lost("remote")
            call.error(ERR + "Failed", "Operation failed")
        self.sim.later(200, drop)

    def _finish_error(self, call, name, text):
        if self.busy is call:
            self.busy = None
        call.error(name, text)

    def _finish_read(self, call, offset):
        if self.busy is not call:
            return
        self.busy = None
        value = self.current_value()
        if offset > len(value):
            call.error(ERR + "InvalidArguments", "Invalid offset")
            return
        self.value = value
        call.reply("ay", dbus_bytes(value[offset:]))
        self.set(Value=value)      # BlueZ updates the cached Value after a read

    # ------------------------------------------------------------ WriteValue
    def m_WriteValue(self, call, value, options):
        self._check()
        if self.write_io is not None:
            raise DBusError(ERR + "NotPermitted", "Write acquired")
        kind = options.get("type")
        flags = self.spec.flags
        if kind is not None and str(kind) not in ("request", "command", "reliable"):
            raise DBusError(ERR + "InvalidArguments", "Invalid arguments in method call")
        refuse_write_if_claimed(self)
        if kind is None:
            kind = "request" if "write" in flags else "command"
        kind = str(kind)
        flags = self.flags
        if kind in ("request", "reliable") and "write" not in flags:
            raise DBusError(ERR + "NotSupported", "Operation is not supported")
        if kind == "command" and "write-without-response" not in flags:
            raise DBusError(ERR + "NotSupported", "Operation is not supported")
        if self.busy is not None:
            raise in_progress()
        if self.sim.faults.consume_once("write_in_progress_once"):
            raise in_progress()
        if self.tree.service_changed_by(self, call):
            return
        if self._needs_pairing(call):
            return
        if kind != "command" and self.sim.faults.get("write_never_answers"):
            self.busy = call
            return
        if self.sim.faults.get("drop_link_on") == "WriteValue":
            self.busy = call
            self._drop_link_later(call)
            return
        data = bytes(value)
        if kind == "command" and len(data) > self.sim.faults.get("att_mtu") - 3:
            # One ATT Write Command; bt_att_send refuses a PDU longer than the MTU.
            raise DBusError(ERR + "Failed", "Failed to initiate write")
        if kind == "command":
            self._written(call, data)
        else:
            self.busy = call
            self._later(OP_MS, self._finish_write, call, data)

    def _finish_write(self, call, data):
        if self.busy is not call:
            return
        self.busy = None
        self._written(call, data)

    def _written(self, call, data, via="write_value"):
        self.value = data
        if self.role == "echo_sink":
            self._echo(data, via)
            if call is not None:
                call.reply()
            self._echo_drop_link()
            return
        answer = None
        if self.role == "vendor_cmd" and data and not self.sim.faults.get("no_notification"):
            answer = self.tree.vendor_answer(data[0])
        rsp = self.tree.vendor_rsp()
        if answer is not None and rsp is not None and self.sim.faults.get("notify_before_write_reply"):
            rsp.vendor_answer(answer)
            if call is not None:
                call.reply()
            return
        if call is not None:
            call.reply()
        if answer is not None and rsp is not None:
            rsp._later(NOTIFY_MS, rsp.vendor_answer, answer)

    # ------------------------------------------------------------ AcquireWrite / AcquireNotify
    def m_AcquireWrite(self, call, options):
        acquire.acquire_write(self, call)

    def m_AcquireNotify(self, call, options):
        acquire.acquire_notify(self, call)

    def datagram(self, data):
        """One datagram from an acquired write socket: one ATT Write Command (sock_read)."""
        if len(data) > self.sim.faults.get("att_mtu") - 3:
            if self.role == "echo_sink":
                self.sim.echo.oversized += 1
            return
        self._written(None, data, via="socket")

    def _echo(self, data, via):
        """The echo device's sink: recorded (state "echo"), then notified back on its source."""
        self.sim.echo.add(data, via)
        source = self.tree.echo_source()
        if source is not None and (source.notify_io is not None or source.active()):
            self.sim.echo.notified += 1
            source.notify(data)

    def _echo_drop_link(self):
        limit = self.sim.faults.get("echo_drop_link_after_bytes")
        if limit > 0 and self.sim.echo.bytes >= limit and self.device.connected:
            self.sim.set_fault("echo_drop_link_after_bytes", 0)      # once
            self.device.link_lost("remote")

    def socket_released(self, sock, quiet=False):
        """An acquired socket is gone (the client closed it, or the link dropped)."""
        if sock is self.write_io:
            self.write_io = None
            if not quiet:
                self.set(WriteAcquired=False)
        elif sock is self.notify_io:
            self.notify_io = None
            if not quiet:
                self.set(NotifyAcquired=False)

    def close_sockets(self, reason):
        for sock in (self.write_io, self.notify_io):
            if sock is not None:
                sock.close(reason)

    def vendor_answer(self, answer):
        """The vendor answer notification; with unsolicited_after_answer, an unrelated
        notification follows it back to back (both reach a client in one read)."""
        if self.sim.faults.get("unsolicited_after_answer"):
            resume = self.sim.hold_clients(self.notify_clients)
            self.notify_many([answer, UNSOLICITED])
            resume()
        else:
            self.notify(answer)

    # ------------------------------------------------------------ link / clients
    def link_lost(self, keep_notify=False):
        """The link is gone: acquired sockets shut, operations in flight fail; notify sessions
        end, or with keep_notify (DropLink) are kept, Notifying true, to be re-enabled by rearm()."""
        self.close_sockets("link")       # the client sees HUP; unread datagrams are lost
        for t in self.ops:
            self.sim.cancel(t)
        self.ops.clear()
        if self.busy is not None:
            c, self.busy = self.busy, None
            c.error(ERR + "Failed", "Operation failed")
        pending, self.pending_notify = self.pending_notify, {}
        for c in pending.values():
            c.error(ERR + "Failed", "Operation failed")
        if self.notify_clients and keep_notify:
            self.sim.cancel(self.status_timer)
            self.status_timer = None
            self.stop_ticker()
            self.rearm_pending = True
        elif self.notify_clients:
            self.notify_clients.clear()
            self._notify_off()

    def vanish(self):
        """Service Changed: the object goes with the calls in flight unanswered (BlueZ drops
        them) and its notify sessions ended; acquired sockets shut."""
        self.close_sockets("link")
        for t in self.ops:
            self.sim.cancel(t)
        self.ops.clear()
        self.busy = None
        self.pending_notify = {}
        self.sim.cancel(self.status_timer)
        self.status_timer = None
        self.stop_ticker()
        self.rearm_pending = False
        self.notify_clients.clear()

    def forget_calls(self):
        self.close_sockets("bluez_gone")
        self.busy = None
        self.pending_notify = {}
        self.ops.clear()
        self.status_timer = None
        self.ticker = None
        self.rearm_pending = False
        self.notify_clients.clear()

    def client_left(self, sender):
        pending = self.pending_notify.pop(sender, None)
        if pending is not None:
            pending.client_gone = True
        if sender in self.notify_clients:
            self.notify_clients.discard(sender)
            if not self.notify_clients:
                self._notify_off()
