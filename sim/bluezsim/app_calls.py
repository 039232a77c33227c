"""Calls from the simulated bluetoothd into objects that clients export (an advertisement,
a GATT application): made from org.bluez's own connection, as bluetoothd makes them, never
blocking the main loop, each with a timeout and logged with its outcome (state
"app_calls"). One idea: bluetoothd as a D-Bus *client* of an application.

BlueZ 5.66 reaches these objects through gdbus's GDBusClient (gdbus/client.c): the
GetManagedObjects and Properties.GetAll it sends when a client registers use libdbus's
default timeout (-1: 25 s); g_dbus_proxy_method_call waits METHOD_CALL_TIMEOUT (300 s) for
ReadValue/WriteValue; a call made without a reply function (Release, StartNotify,
StopNotify, Confirm, a write-without-response WriteValue) goes out through
g_dbus_send_message with NO_REPLY_EXPECTED set (gdbus/object.c)."""

import time

import dbus
import dbus.lowlevel

PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
DEFAULT_TIMEOUT_S = 25        # libdbus's default (timeout -1), GDBusClient's GetManagedObjects/GetAll
METHOD_CALL_TIMEOUT_S = 300   # gdbus/client.c METHOD_CALL_TIMEOUT
LOG_LIMIT = 1000              # the log keeps the newest entries


def error_name(exc):
    """The D-Bus error name of a dbus-python exception ("" when it has none)."""
    return (exc.get_dbus_name() if isinstance(exc, dbus.DBusException) else None) or ""


class AppCalls:
    """Expects of the Sim: bus (its conn is org.bluez's connection)."""

    def __init__(self, sim):
        self.sim = sim
        self.log = []

    def clear(self):
        self.log.clear()

    def _entry(self, owner, path, iface, member, purpose):
        entry = {"member": member, "interface": iface, "client": owner, "path": path,
                 "purpose": purpose, "outcome": "pending", "sent_at": time.monotonic()}
        self.log.append(entry)
        if len(self.log) > LOG_LIMIT:
            del self.log[: len(self.log) - LOG_LIMIT]
        return entry

    def call(self, owner, path, iface, member, sig, args, on_reply, on_error,
             timeout_s=DEFAULT_TIMEOUT_S, purpose=""):
        """Calls member on the client's object; on_reply(*values) or on_error(name, text)
        runs later on the main loop (a timeout is org.freedesktop.DBus.Error.NoReply, as
        libdbus reports it). Returns the log entry, or None when bluetoothd is not on the bus
        (nothing is called, nothing answers)."""
        bus = self.sim.bus
        if not bus.alive:
            return None
        entry = self._entry(owner, path, iface, member, purpose)
        generation = bus.generation

        def done(outcome):
            entry["outcome"] = outcome
            entry["answered_at"] = time.monotonic()
            return bus.alive and bus.generation == generation

        def ok(*values):
            shown = ",".join(_show(v) for v in values)
            if done("reply" + (":" + shown if shown else "")):
                on_reply(*values)

        def err(exc):
            name = error_name(exc) or "org.freedesktop.DBus.Error.Failed"
            text = exc.get_dbus_message() if isinstance(exc, dbus.DBusException) else str(exc)
            if done("error:" + name):
                on_error(name, text or "")
        bus.conn.call_async(owner, path, iface, member, sig, args, ok, err,
                            timeout=timeout_s, byte_arrays=True)
        return entry

    def send(self, owner, path, iface, member, sig="", args=(), purpose=""):
        """A call with NO_REPLY_EXPECTED (g_dbus_send_message): nothing comes back."""
        bus = self.sim.bus
        if not bus.alive:
            return None
        entry = self._entry(owner, path, iface, member, purpose)
        entry["outcome"] = "sent"
        m = dbus.lowlevel.MethodCallMessage(owner, path, iface, member)
        if sig:
            m.append(*args, signature=sig)
        m.set_no_reply(True)
        bus.conn.send_message(m)
        return entry

    def watch_properties(self, owner, root, handler):
        """PropertiesChanged signals from `owner` on `root` or below (GDBusClient's match
        rule: sender and path_namespace): handler(path, iface, changed, invalidated).
        Returns the match (remove() it), or None when bluetoothd is not on the bus."""
        bus = self.sim.bus
        if not bus.alive:
            return None
        prefix = root.rstrip("/") + "/"

        def on_signal(iface, changed, invalidated, path=None, sender=None):
            if path == root or (path or "").startswith(prefix):
                handler(str(path), str(iface), dict(changed), [str(n) for n in invalidated])
        return bus.conn.add_signal_receiver(on_signal, "PropertiesChanged", PROPS, owner,
                                            path_keyword="path", sender_keyword="sender",
                                            byte_arrays=True)


def _show(value):
    """A reply value as the log shows it: bytes in hex, the rest as text."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, dbus.Dictionary):
        return "{%d entries}" % len(value)
    return str(value)


def unwatch(match):
    if match is not None:
        try:
            match.remove()
        except Exception:
            pass
