"""D-Bus plumbing for the simulated org.bluez: an object tree with properties,
ObjectManager / Properties / Introspectable, message dispatch with replies that
may be sent later, and signal emission. One idea: speak D-Bus like gdbus does."""

import time

import dbus
import dbus.lowlevel

PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
INTRO = "org.freedesktop.DBus.Introspectable"
STD_IFACES = (INTRO, PROPS)


class DBusError(Exception):
    def __init__(self, name, text):
        super().__init__(f"{name}: {text}")
        self.name = name
        self.text = text


# ---------------------------------------------------------------- typing helpers

def split_sig(sig):
    """Split a D-Bus signature into its complete types."""
    out, i = [], 0
    while i < len(sig):
        j = _end(sig, i)
        out.append(sig[i:j])
        i = j
    return out


def _end(sig, i):
    c = sig[i]
    if c == "a":
        return _end(sig, i + 1)
    if c in "({":
        close = ")" if c == "(" else "}"
        depth, j = 0, i
        while True:
            if sig[j] in "({":
                depth += 1
            elif sig[j] in ")}":
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
    return i + 1


def variant_of(value):
    """Type a value placed in a 'v' slot: bytes -> ay, (sig, val) -> typed."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return typed(value[0], value[1])
    if isinstance(value, (bytes, bytearray)):
        return dbus.Array([dbus.Byte(b) for b in value], signature="y")
    if isinstance(value, bool):
        return dbus.Boolean(value)
    if isinstance(value, int):
        return dbus.Int32(value)
    if isinstance(value, str):
        return dbus.String(value)
    return value


_SCALARS = {
    "b": dbus.Boolean, "y": dbus.Byte, "n": dbus.Int16, "q": dbus.UInt16,
    "i": dbus.Int32, "u": dbus.UInt32, "x": dbus.Int64, "t": dbus.UInt64,
    "d": dbus.Double, "s": dbus.String, "o": dbus.ObjectPath, "g": dbus.Signature,
}


def typed(sig, value):
    """Convert a Python value to dbus-python types following signature sig."""
    if sig in _SCALARS:
        return _SCALARS[sig](value)
    if sig == "v":
        return variant_of(value)
    if sig == "ay":
        return dbus.Array([dbus.Byte(b) for b in value], signature="y")
    if sig.startswith("a{"):
        ks, vs = split_sig(sig[2:-1])
        return dbus.Dictionary({typed(ks, k): typed(vs, v) for k, v in value.items()},
                               signature=ks + vs)
    if sig.startswith("a"):
        es = sig[1:]
        return dbus.Array([typed(es, e) for e in value], signature=es)
    if sig.startswith("("):
        parts = split_sig(sig[1:-1])
        return dbus.Struct([typed(s, v) for s, v in zip(parts, value)], signature=sig[1:-1])
    raise ValueError(f"unsupported signature {sig}")


def plain(value):
    """dbus-python value -> plain Python (for JSON and filters)."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.ByteArray, bytes)):
        return bytes(value)
    if isinstance(value, (int,)):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


# ---------------------------------------------------------------- calls

class Call:
    """An incoming method call; reply() or error() answer it once, now or later."""

    def __init__(self, bus, msg, record):
        self.bus = bus
        self.msg = msg
        self.record = record
        self.sender = msg.get_sender()
        self.member = msg.get_member()
        self.interface = msg.get_interface()
        self.path = msg.get_path()
        self.done = False
        self.generation = bus.generation

    def reply(self, sig="", *values):
        if self.done:
            return
        self.done = True
        self.record["outcome"] = "reply"
        self.record["answered_at"] = time.monotonic()
        if not self.bus.alive or self.generation != self.bus.generation:
            return
        if self.msg.get_no_reply():
            return
        r = dbus.lowlevel.MethodReturnMessage(self.msg)
        if sig:
            r.append(*values, signature=sig)
        self.bus.conn.send_message(r)

    def error(self, name, text):
        if self.done:
            return
        self.done = True
        self.record["outcome"] = "error:" + name
        self.record["answered_at"] = time.monotonic()
        if not self.bus.alive or self.generation != self.bus.generation:
            return
        if self.msg.get_no_reply():
            return
        self.bus.conn.send_message(dbus.lowlevel.ErrorMessage(self.msg, name, text))

    def fail(self, exc):
        self.error(exc.name, exc.text)


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
        if not _value_matches(want, value):
            raise DBusError("org.freedesktop.DBus.Error.InvalidArgs",
                            "Invalid argument type: '%s'" % _guess_sig(value))
        setter(call, plain(value))

    # ------------------------------------------------------------ introspection
    def introspect(self, path):
        obj = self.objects.get(path)
        parts = ['<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"\n'
                 '"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">\n<node>']
        parts.append('<interface name="org.freedesktop.DBus.Introspectable">'
                     '<method name="Introspect"><arg name="xml" type="s" direction="out"/></method></interface>')
        if path == "/":
            parts.append('<interface name="org.freedesktop.DBus.ObjectManager">'
                         '<method name="GetManagedObjects"><arg name="objects" type="a{oa{sa{sv}}}" direction="out"/></method>'
                         '<signal name="InterfacesAdded"><arg name="object" type="o"/><arg name="interfaces" type="a{sa{sv}}"/></signal>'
                         '<signal name="InterfacesRemoved"><arg name="object" type="o"/><arg name="interfaces" type="as"/></signal>'
                         '</interface>')
        if obj is not None:
            for iname, table in obj.ifaces.items():
                parts.append(f'<interface name="{iname}">')
                spec = self.iface_table.get(iname, {})
                for m, (i, o) in spec.get("methods", {}).items():
                    parts.append(f'<method name="{m}">')
                    for n, s in enumerate(split_sig(i)):
                        parts.append(f'<arg name="arg{n}" type="{s}" direction="in"/>')
                    for n, s in enumerate(split_sig(o)):
                        parts.append(f'<arg name="ret{n}" type="{s}" direction="out"/>')
                    parts.append('</method>')
                writable = obj.writable.get(iname, {})
                for pname, (psig, _) in table.items():
                    access = "readwrite" if pname in writable else "read"
                    parts.append(f'<property name="{pname}" type="{psig}" access="{access}"/>')
                parts.append('</interface>')
            parts.append('<interface name="org.freedesktop.DBus.Properties">'
                         '<method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>'
                         '<method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>'
                         '<method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>'
                         '<signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>'
                         '</interface>')
        prefix = path.rstrip("/") + "/"
        kids = sorted({p[len(prefix):].split("/")[0] for p in self.objects if p.startswith(prefix)})
        for k in kids:
            parts.append(f'<node name="{k}"/>')
        parts.append("</node>")
        return "".join(parts)


def _guess_sig(v):
    for sig, cls in _SCALARS.items():
        if type(v) is cls:
            return sig
    return getattr(v, "signature", None) and ("a" + str(v.signature)) or "?"


def _value_matches(sig, v):
    if sig in _SCALARS:
        return type(v) is _SCALARS[sig]
    return True
