"""A simulated central (a phone) that connects to the simulated adapter while it advertises
connectably, and reads, writes and subscribes to the attributes of the registered GATT
applications: what bluetoothd 5.66 does with each ATT request (src/shared/gatt-server.c
check_permissions; src/gatt-database.c chrc_read_cb, chrc_write_cb, desc_*_cb, send_read,
send_write, ccc_write_cb, property_changed_cb, att_disconnected). Driven by the control
interface (blectl-sim central ...); every call into an application comes from org.bluez's
connection (app_calls.py). One idea: the remote central and its link."""

import time

import dbus

from . import gatt_app
from .gatt_app import P_INDICATE, P_NOTIFY, P_WWR, READ, WRITE, ENCRYPT, AUTHEN, SECURE
from .world import DeviceSpec

ADDRESS = "C0:FF:EE:00:CE:01"     # random static, as a phone's identity after pairing would be
LINK_UP_MS = 30
RESOLVE_MS = 80
MAX_VALUE = 512                   # BT_ATT_MAX_VALUE_LEN
# ATT error codes (src/shared/att-types.h) and what dbus_error_to_att_ecode maps to them
E_READ_NOT_PERMITTED, E_WRITE_NOT_PERMITTED, E_AUTHENTICATION = 0x02, 0x03, 0x05
E_NOT_SUPPORTED, E_INVALID_OFFSET, E_AUTHORIZATION, E_VALUE_LEN = 0x06, 0x07, 0x08, 0x0d
E_UNLIKELY, E_INSUFFICIENT_ENCRYPTION = 0x0e, 0x0f
E_CCC_IMPROPER, E_IN_PROGRESS = 0xfd, 0xfe


def att_error(name, text, perm_err):
    """dbus_error_to_att_ecode: the ATT error a D-Bus error from the application becomes."""
    if name == "org.bluez.Error.Failed":
        try:
            code = int(text, 0)
        except ValueError:
            return 0x80                   # no code in the message: Application Error
        return code if 0x80 <= code <= 0x9f else E_UNLIKELY
    return {"org.bluez.Error.NotSupported": E_NOT_SUPPORTED, "org.bluez.Error.NotAuthorized": E_AUTHORIZATION,
            "org.bluez.Error.InvalidValueLength": E_VALUE_LEN, "org.bluez.Error.InvalidOffset": E_INVALID_OFFSET,
            "org.bluez.Error.InProgress": E_IN_PROGRESS,
            "org.bluez.Error.NotPermitted": perm_err}.get(name, E_UNLIKELY)


def check_permissions(perm, mask):
    """check_permissions for an unencrypted link (this central never pairs)."""
    if perm and mask & READ and not perm & READ:
        return E_READ_NOT_PERMITTED
    if perm and mask & WRITE and not perm & WRITE:
        return E_WRITE_NOT_PERMITTED
    if perm & (SECURE | AUTHEN):
        return E_AUTHENTICATION
    if perm & ENCRYPT:
        return E_INSUFFICIENT_ENCRYPTION
    return 0


class CentralError(Exception):
    """The control call fails: `kind` InvalidArguments or Failed."""

    def __init__(self, kind, text):
        super().__init__(text)
        self.kind = kind
        self.text = text


class Central:
    """Expects of the Sim: adapter, advertising, gatt_server, app_calls, devices, bus,
    ensure_device(), later(), cancel(), faults."""

    def __init__(self, sim):
        self.sim = sim
        self.clear()

    def clear(self):
        self.connected = False
        self.mtu = 23
        self.ccc = {}                 # characteristic Attr -> CCC value (1 notify, 2 indicate)
        self.ntfy_cnt = {}            # characteristic Attr -> subscribed devices (chrc->ntfy_cnt)
        self.operations = []          # every request, with its outcome
        self.notifications = []       # what reached the central
        self.pending = []             # operations waiting for the application

    def device(self):
        return self.sim.devices.get(ADDRESS)

    # ------------------------------------------------------------ the link
    def connect(self, mtu, done):
        """The central connects: the adapter must be powered and advertising connectably (an
        active "peripheral" advertisement). bluetoothd adds the device (temporary, Connected
        true), its GATT client reads the central's database (ServicesResolved true, nothing
        exported: the central's GAP and GATT services are bluetoothd's own to hide). The MTU
        exchanged is the central's (bluetoothd offers 517)."""
        ad = self.sim.adapter
        if self.connected:
            raise CentralError("Failed", "the central is already connected")
        if ad is None or not ad.powered:
            raise CentralError("Failed", "the adapter is off")
        if not any(r.ad.type == "peripheral" for r in self.sim.advertising.clients if r.active):
            raise CentralError("Failed", "nothing advertises connectably: register a \"peripheral\" advertisement first")
        if not 23 <= mtu <= 517:
            raise CentralError("InvalidArguments", "mtu must be 23..517")
        spec = DeviceSpec(ADDRESS, None, address_type="random", advertises=False, connectable=False, group="central")
        dev = self.sim.ensure_device(spec)
        dev.on_link_lost = self._link_lost
        self.mtu = mtu

        def up():
            if self.sim.adapter is None or not self.sim.adapter.powered:
                return done(CentralError("Failed", "the adapter went off"))
            self.connected = True
            dev.connected, dev.bearer, dev.connected_by = True, "le", None
            dev.set(Connected=True)
            self.sim.later(RESOLVE_MS, self._resolved, dev)
            done(None)
        self.sim.later(LINK_UP_MS, up)

    def _resolved(self, dev):
        if dev.connected and not dev.removed:
            dev.services_resolved = dev.le_svc_resolved = True
            dev.set(ServicesResolved=True)

    def disconnect(self):
        """The central ends the link (a remote disconnection)."""
        dev = self.device()
        if not self.connected or dev is None:
            raise CentralError("Failed", "the central is not connected")
        dev.link_lost(reason="remote")

    def _link_lost(self, reason):
        """att_disconnected: a central that is not bonded loses its CCC state, so each
        subscription ends (StopNotify when it was the last one, ccc_write_cb); requests in
        flight are never answered to it."""
        if not self.connected:
            return
        self.connected = False
        for c, value in list(self.ccc.items()):
            self._ccc_disable(c)
        self.ccc.clear()
        for op in self.pending:
            op["outcome"] = "disconnected"
            self._finish(op)
        self.pending.clear()

    # ------------------------------------------------------------ requests
    def _op(self, kind, attr, **extra):
        op = {"op": kind, "path": attr.path, "handle": attr.handle, "outcome": "pending",
              "started_at": time.monotonic(), **extra}
        self.operations.append(op)
        return op

    def _finish(self, op):
        op["ended_at"] = time.monotonic()
        cb = op.pop("_done", None)
        timer = op.pop("_timer", None)
        self.sim.cancel(timer)
        if op in self.pending:
            self.pending.remove(op)
        if cb is not None:
            cb(op)

    def _att_error(self, op, code):
        op["outcome"] = "att_error"
        op["att_error"] = "0x%02x" % code
        self._finish(op)

    def _target(self, target):
        if not self.connected:
            raise CentralError("Failed", "the central is not connected")
        attr = self.sim.gatt_server.find(target)
        if attr is None:
            raise CentralError("InvalidArguments", f"no characteristic or descriptor {target!r} in a registered application")
        return attr

    def _options(self, offset):
        """append_options: device, offset (when not 0), link, mtu."""
        opts = {"device": dbus.ObjectPath(self.device().path), "link": dbus.String("LE"), "mtu": dbus.UInt16(self.mtu)}
        if offset:
            opts["offset"] = dbus.UInt16(offset)
        return dbus.Dictionary(opts, signature="sv")

    def _ask(self, op, attr, member, sig, args, perm_err, on_value):
        """send_read/send_write: the call to the application, the answer to the central.
        The central gives up after its ATT transaction timeout (30 s, the Core's) and, as a
        central must then, ends the link."""
        app = self.sim.gatt_server.owner_of(attr)
        iface = gatt_app.CHRC if attr.kind == "characteristic" else gatt_app.DESC
        self.pending.append(op)

        def reply(*values):
            if op in self.pending:
                on_value(*values)

        def error(name, text):
            if op in self.pending:
                op["dbus_error"] = name
                self._att_error(op, att_error(name, text, perm_err))

        def timed_out():
            op.pop("_timer", None)
            if op in self.pending:
                op["outcome"] = "timeout"
                self._finish(op)
                if self.connected:
                    self.device().link_lost(reason="remote")
        op["_timer"] = self.sim.later(self.sim.faults.get("central_att_timeout_ms"), timed_out)
        self.sim.app_calls.call(app.owner, attr.path, iface, member, sig, args, reply, error,
                                timeout_s=300, purpose="central")

    def read(self, target, offset, done):
        attr = self._target(target)
        op = self._op("read", attr, offset=offset)
        op["_done"] = done
        code = check_permissions(attr.perm, READ)
        if code:
            return self._att_error(op, code)

        def value(v=b""):
            if not isinstance(v, (bytes, bytearray)):
                return self._att_error(op, E_NOT_SUPPORTED)     # "Invalid return value"
            v = bytes(v)[:MAX_VALUE]
            op.update(outcome="value", app_value=v.hex(), value=v[: self.mtu - 1].hex())
            self._finish(op)
        self._ask(op, attr, "ReadValue", "a{sv}", (self._options(offset),), E_READ_NOT_PERMITTED, value)

    def write(self, target, data, command, offset, done):
        """An ATT Write Request (command False) or Write Command. bluetoothd waits for the
        application only when the characteristic lacks write-without-response: with that
        flag every write is answered at once and WriteValue goes out with no reply expected
        (chrc_write_cb passes no queue). A Write Command is never answered to the central."""
        attr = self._target(target)
        if len(data) > self.mtu - 3:
            raise CentralError("InvalidArguments", f"at most MTU - 3 = {self.mtu - 3} bytes in one write")
        op = self._op("write-command" if command else "write", attr, offset=offset, value=bytes(data).hex())
        op["_done"] = done
        code = check_permissions(attr.perm, WRITE)
        if code:
            if command:
                op["outcome"] = "dropped"     # a command's error is not reported
                return self._finish(op)
            return self._att_error(op, code)
        args = (dbus.ByteArray(bytes(data)), self._options(offset))
        if attr.kind == "characteristic" and attr.properties & P_WWR:
            self.sim.app_calls.send(self.sim.gatt_server.owner_of(attr).owner, attr.path, gatt_app.CHRC,
                                    "WriteValue", "aya{sv}", args, purpose="central")
            op["outcome"] = "sent" if command else "written"
            return self._finish(op)

        def written(*values):
            if values:
                return self._att_error(op, E_NOT_SUPPORTED)     # WriteValue returns nothing
            op["outcome"] = "sent" if command else "written"
            self._finish(op)
        self._ask(op, attr, "WriteValue", "aya{sv}", args, E_WRITE_NOT_PERMITTED, written)

    # ------------------------------------------------------------ the CCC
    def _ccc_write(self, kind, target, value, done):
        """A write of `value` to the CCC of the characteristic `target`: (the attribute, the
        operation), or None when the write failed (the ATT error already recorded)."""
        attr = self._target(target)
        op = self._op(kind, attr, ccc_handle=attr.ccc_handle, ccc_value=value)
        op["_done"] = done
        if attr.kind != "characteristic" or attr.ccc_handle is None:
            self._att_error(op, E_UNLIKELY if attr.kind != "characteristic" else E_NOT_SUPPORTED)
            return None
        code = check_permissions(attr.ccc_perm, WRITE)
        if code:
            self._att_error(op, code)
            return None
        return attr, op

    def subscribe(self, target, indicate, done):
        value = 2 if indicate else 1
        written = self._ccc_write("subscribe", target, value, done)
        if written is None:
            return
        attr, op = written
        if self.ccc.get(attr) == value:
            op["outcome"] = "written"          # the same value: nothing else happens
            return self._finish(op)
        if value == 1 and not attr.properties & P_NOTIFY or value == 2 and not attr.properties & P_INDICATE:
            return self._att_error(op, E_CCC_IMPROPER)
        # ccc_write_cb: StartNotify for every enabling write (no reply looked at).
        app = self.sim.gatt_server.owner_of(attr)
        self.sim.app_calls.send(app.owner, attr.path, gatt_app.CHRC, "StartNotify", purpose="central")
        self.ntfy_cnt[attr] = self.ntfy_cnt.get(attr, 0) + 1
        self.ccc[attr] = value
        op["outcome"] = "written"
        self._finish(op)

    def unsubscribe(self, target, done):
        written = self._ccc_write("unsubscribe", target, 0, done)
        if written is None:
            return
        attr, op = written
        if self.ccc.pop(attr, 0):
            self._ccc_disable(attr)
        op["outcome"] = "written"
        self._finish(op)

    def _ccc_disable(self, attr):
        """ccc_write_cb with 0: the last subscriber gone, StopNotify (no reply looked at)."""
        if not self.ntfy_cnt.get(attr):
            return
        self.ntfy_cnt[attr] -= 1
        if self.ntfy_cnt[attr] == 0:
            app = self.sim.gatt_server.owner_of(attr)
            if app is not None:
                self.sim.app_calls.send(app.owner, attr.path, gatt_app.CHRC, "StopNotify", purpose="central")

    # ------------------------------------------------------------ from the applications
    def value_changed(self, attr, value):
        """property_changed_cb -> send_notification_to_device: to a connected central whose
        CCC is set, a notification (or an indication, confirmed at once: bluetoothd then
        calls Confirm on the characteristic, conf_cb). At most MTU - 3 bytes arrive."""
        ccc = self.ccc.get(attr)
        if not self.connected or not ccc:
            return
        value = value[:MAX_VALUE]
        kind = "indication" if ccc & 2 else "notification"
        self.notifications.append({"kind": kind, "path": attr.path, "handle": attr.handle,
                                   "value": value[: self.mtu - 3].hex(), "received_at": time.monotonic()})
        if kind == "indication":
            app = self.sim.gatt_server.owner_of(attr)
            self.sim.app_calls.send(app.owner, attr.path, gatt_app.CHRC, "Confirm", purpose="central")

    def attributes_gone(self, attrs):
        """The application left the database: requests in flight answered Request Not
        Supported (cancel_pending_read/write), its subscriptions gone."""
        gone = set(id(a) for a in attrs)
        for op in list(self.pending):
            if any(id(a) in gone and a.path == op["path"] for a in attrs):
                self._att_error(op, E_NOT_SUPPORTED)
        for a in attrs:
            self.ccc.pop(a, None)
            self.ntfy_cnt.pop(a, None)

    # ------------------------------------------------------------ state
    def state(self):
        dev = self.device()
        return {"address": ADDRESS, "connected": self.connected, "mtu": self.mtu,
                "device": dev.path if dev is not None else None,
                "subscriptions": [{"path": a.path, "handle": a.handle, "ccc_value": v} for a, v in self.ccc.items()],
                "operations": [public(op) for op in self.operations],
                "notifications": list(self.notifications)}


def public(op):
    return {k: v for k, v in op.items() if not k.startswith("_")}
