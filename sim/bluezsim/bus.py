"""D-Bus plumbing for the simulated org.bluez: an object tree with properties,
ObjectManager / Properties / Introspectable, message dispatch with replies that
may be sent later, and signal emission. One idea: speak D-Bus like gdbus does.
The typing is in dbus_types.py, the call and its answer in call.py, the Introspect
XML in introspect.py."""

import time

import dbus
import dbus.lowlevel

from .call import Call, DBusError
from .dbus_types import guess_sig, plain, typed, value_matches
from .introspect import introspection_xml

PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
INTRO = "org.freedesktop.DBus.Introspectable"
STD_IFACES = (INTRO, PROPS)


# ---------------------------------------------------------------- objects

class Obj:
    """One exported object: interfaces -> {property: [signature, value]} (None = absent)."""

    def __init__(self, path):
        self.path = path
        self.ifaces = {}      # name -> {prop: [sig, value]}
        self.handlers = {}    # iface name -> handler object with m_<Member>
        self.writable = {}    # iface name -> {prop: setter(call, value)}

    def props(self, iface):
        return {n: typed(sv[0], sv[1]) for n, sv in self.ifaces.get(iface, {}).items()
                if sv[1] is not None}

    def get(self, iface, name):
        sv = self.ifaces.get(iface, {}).get(name)
        return None if sv is None else sv[1]


class Bus:
    """The org.bluez side: owns a connection, an object tree and a call log."""

    def __init__(self, iface_table, on_call_log):
        self.iface_table = iface_table   # iface -> {"methods": {member: (in, out)}, "signals": {...}}
        self.on_call_log = on_call_log
        self.objects = {}                # path -> Obj (exported)
        self.conn = None
        self.alive = False
        self.generation = 0
        self.intercept = None            # callable(call) -> True if it swallowed the call

    def attach(self, conn):
        self.conn = conn
        self.alive = True
        self.generation += 1
        conn._register_object_path("/", self._on_message, None, True)

    def detach(self):
        """Close the connection without answering anything (bluetoothd dies)."""
        self.alive = False
        self.generation += 1
        conn, self.conn = self.conn, None
        if conn is not None:
            try:
                conn._unregister_object_path("/")
            except Exception:
                pass
            try:
                conn.flush()
                conn.close()
            except Exception:
                pass

    # ------------------------------------------------------------ signals
    @staticmethod
    def _message(path, iface, member, sig, *args):
        m = dbus.lowlevel.SignalMessage(path, iface, member)
        if sig:
            m.append(*args, signature=sig)
        return m

    def _signal(self, path, iface, member, sig, *args):
        if not self.alive:
            return
        self.conn.send_message(self._message(path, iface, member, sig, *args))

    def send_back_to_back(self, messages):
        """Sends messages built beforehand (prepare_props, added_message) in one tight loop,
        so that they leave this process microseconds apart and a client reads them together
        (one batch), as when a device's notifications or a restart's signals pile up."""
        if not self.alive:
            return
        send = self.conn.send_message
        for m in messages:
            if m is not None:
                send(m)
        self.conn.flush()

    def added_message(self, obj):
        """InterfacesAdded of an exported object with all its interfaces (not sent)."""
        return self._message("/", OM, "InterfacesAdded", "oa{sa{sv}}", obj.path, self._all_ifaces(obj))

    def _all_ifaces(self, obj):
        d = {i: {} for i in STD_IFACES}
        for i in obj.ifaces:
            d[i] = obj.props(i)
        return d

    def export(self, obj):
        self.objects[obj.path] = obj
        self._signal("/", OM, "InterfacesAdded", "oa{sa{sv}}", obj.path, self._all_ifaces(obj))

    def export_many(self, objs):
        for o in objs:
            self.export(o)

    def unexport(self, path):
        obj = self.objects.pop(path, None)
        if obj is None:
            return
        names = list(STD_IFACES) + list(obj.ifaces)
        self._signal("/", OM, "InterfacesRemoved", "oas", path, names)

    def unexport_tree(self, path):
        """Remove an object and everything under it, children first."""
        kids = sorted((p for p in self.objects if p.startswith(path + "/")), key=len, reverse=True)
        for p in kids:
            self.unexport(p)
        self.unexport(path)

    def add_iface(self, obj, iface, props, handler=None):
        obj.ifaces[iface] = props
        if handler is not None:
            obj.handlers[iface] = handler
        if obj.path in self.objects:
            self._signal("/", OM, "InterfacesAdded", "oa{sa{sv}}", obj.path, {iface: obj.props(iface)})

    def remove_iface(self, obj, iface):
        if iface not in obj.ifaces:
            return
        del obj.ifaces[iface]
        obj.handlers.pop(iface, None)
        if obj.path in self.objects:
            self._signal("/", OM, "InterfacesRemoved", "oas", obj.path, [iface])

    def set_props(self, obj, iface, changes, force=False):
        """changes: {name: value}; value None invalidates. Emits one PropertiesChanged."""
        m = self.prepare_props(obj, iface, changes, force)
        if m is not None and self.alive:
            self.conn.send_message(m)

    def prepare_props(self, obj, iface, changes, force=False):
        """Like set_props, but returns the PropertiesChanged message (or None) unsent, for
        send_back_to_back. The property table is updated at once."""
        table = obj.ifaces[iface]
        changed, invalidated = {}, []
        for name, value in changes.items():
            cur = table[name]
            if cur[1] == value and not force:
                continue
            cur[1] = value
            if value is None:
                invalidated.append(name)
            else:
                changed[name] = typed(cur[0], value)
        if (changed or invalidated) and obj.path in self.objects:
            return self._message(obj.path, PROPS, "PropertiesChanged", "sa{sv}as",
                                 iface, dbus.Dictionary(changed, signature="sv"),
                                 dbus.Array(invalidated, signature="s"))
        return None

    def set_prop(self, obj, iface, name, value, force=False):
        self.set_props(obj, iface, {name: value}, force)

    # ------------------------------------------------------------ dispatch
    def _on_message(self, conn, msg):
        if msg.get_type() != 1:  # method calls only
            return
        record = {"member": msg.get_member(), "interface": msg.get_interface(),
                  "path": msg.get_path(), "sender": msg.get_sender(), "outcome": "pending",
                  "received_at": time.monotonic()}
        self.on_call_log(record)
        call = Call(self, msg, record)
        try:
            self._dispatch(call, msg)
        except DBusError as e:
            call.fail(e)
        except Exception as e:  # a bug in the simulator: answer, and say so on stderr
            import traceback
            traceback.print_exc()
            call.error("org.freedesktop.DBus.Error.Failed", f"simulator error: {e}")

    def _dispatch(self, call, msg):
        if self.intercept is not None and self.intercept(call):
            return
        path, iface, member = call.path, call.interface, call.member
        sig = msg.get_signature()
        args = msg.get_args_list(byte_arrays=True)
        obj = self.objects.get(path)
        if obj is None and path != "/" and not any(p.startswith(path.rstrip("/") + "/") for p in self.objects):
            raise DBusError("org.freedesktop.DBus.Error.UnknownObject",
                            f"No such object path '{path}'")
        if iface == INTRO or (iface is None and member == "Introspect"):
            if member == "Introspect" and sig == "":
                return call.reply("s", self.introspect(path))
        elif iface == PROPS and obj is not None:
            if member == "Get" and sig == "ss":
                return self._prop_get(call, obj, *args)
            if member == "GetAll" and sig == "s":
                return call.reply("a{sv}", obj.props(args[0]) if args[0] in obj.ifaces else {})
            if member == "Set" and sig == "ssv":
                return self._prop_set(call, obj, *args)
        elif iface == OM and path == "/":
            if member == "GetManagedObjects" and sig == "":
                return self._managed(call)
        elif obj is not None:
            cands = [iface] if iface else list(obj.handlers)
            for i in cands:
                h = obj.handlers.get(i)
                meth = self.iface_table.get(i, {}).get("methods", {}).get(member)
                if h is not None and meth is not None and meth[0] == sig:
                    return getattr(h, "m_" + member)(call, *args)
        raise DBusError("org.freedesktop.DBus.Error.UnknownMethod",
                        f'Method "{member}" with signature "{sig}" on interface "{iface}" doesn\'t exist\n')

    def _managed(self, call):
        out = {}
        for p, o in self.objects.items():
            out[dbus.ObjectPath(p)] = self._all_ifaces(o)
        call.reply("a{oa{sa{sv}}}", out)

    def _prop_get(self, call, obj, iface, name):
        if iface not in obj.ifaces:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"No such interface '{iface}'")
        sv = obj.ifaces[iface].get(name)
        if sv is None or sv[1] is None:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"No such property '{name}'")
        call.reply("v", typed(sv[0], sv[1]))

    def _prop_set(self, call, obj, iface, name, value):
        if iface not in obj.ifaces:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"No such interface '{iface}'")
        if name not in obj.ifaces[iface]:
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs", f"No such property '{name}'")
        setter = obj.writable.get(iface, {}).get(name)
        if setter is None:
            raise DBusError("org.freedesktop.DBus.Error.PropertyReadOnly",
                            f"Property '{name}' is not writable")
        want = obj.ifaces[iface][name][0]
        if not value_matches(want, value):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs",
                            "Invalid argument type: '%s'" % guess_sig(value))
        setter(call, plain(value))

    # ------------------------------------------------------------ introspection
    def introspect(self, path):
        return introspection_xml(self.objects, self.iface_table, path)
