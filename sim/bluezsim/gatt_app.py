"""A GATT application's objects as bluetoothd 5.66 turns them into attributes of its local
database (src/gatt-database.c client_ready_cb: register_profile, register_service,
register_characteristic, register_descriptor, then database_add_app), with the checks and
the error each failure gives RegisterApplication. One idea: from GetManagedObjects to
handles. The manager and its calls are gatt_server.py's."""

import dbus

from .adv_data import parse_uuid, uuid_text

SERVICE = "org.bluez.GattService1"
CHRC = "org.bluez.GattCharacteristic1"
DESC = "org.bluez.GattDescriptor1"
PROFILE = "org.bluez.GattProfile1"
# bluetoothd's own services come first: GAP 0x1800 (7 handles), GATT 0x1801 (10) and, with
# the default DeviceID, Device Information 0x180A (3) (populate_gap_service,
# populate_gatt_service, populate_devinfo_service): applications start at handle 21.
CORE_RANGES = [(0x0001, 0x0007, 0x1800), (0x0008, 0x0011, 0x1801), (0x0012, 0x0014, 0x180A)]

# ATT permissions (src/shared/att-types.h)
READ, WRITE = 0x01, 0x02
ENCRYPT, AUTHEN, SECURE = 0x04, 0x08, 0x10       # each for reads and writes alike here
# Characteristic properties (BT_GATT_CHRC_PROP_*)
P_BROADCAST, P_READ, P_WWR, P_WRITE, P_NOTIFY, P_INDICATE, P_AUTH, P_EXT = 1, 2, 4, 8, 16, 32, 64, 128

# parse_chrc_flags: flag -> (properties, extended properties, permissions, CCC permissions)
CHRC_FLAGS = {
    "broadcast": (P_BROADCAST, 0, 0, 0), "read": (P_READ, 0, READ, 0),
    "write-without-response": (P_WWR, 0, WRITE, 0), "write": (P_WRITE, 0, WRITE, 0),
    "notify": (P_NOTIFY, 0, 0, WRITE), "indicate": (P_INDICATE, 0, 0, WRITE),
    "authenticated-signed-writes": (P_AUTH, 0, WRITE, 0), "extended-properties": (P_EXT, 0, 0, 0),
    "reliable-write": (0, 1, WRITE, 0), "writable-auxiliaries": (0, 2, 0, 0),
    "encrypt-read": (P_READ, 0, READ | ENCRYPT, 0), "encrypt-write": (P_WRITE, 0, WRITE | ENCRYPT, 0),
    "encrypt-authenticated-read": (P_READ, 0, READ | AUTHEN, 0),
    "encrypt-authenticated-write": (P_WRITE, 0, WRITE | AUTHEN, 0),
    "secure-read": (P_READ, 0, READ | SECURE, 0), "secure-write": (P_WRITE, 0, WRITE | SECURE, 0),
    "authorize": (0, 0, 0, 0),
    "encrypt-notify": (P_NOTIFY, 0, 0, ENCRYPT), "encrypt-authenticated-notify": (P_NOTIFY, 0, 0, AUTHEN),
    "secure-notify": (P_NOTIFY, 0, 0, SECURE), "encrypt-indicate": (P_INDICATE, 0, 0, ENCRYPT),
    "encrypt-authenticated-indicate": (P_INDICATE, 0, 0, AUTHEN), "secure-indicate": (P_INDICATE, 0, 0, SECURE),
}
# parse_desc_flags: flag -> permissions
DESC_FLAGS = {"read": READ, "write": WRITE, "encrypt-read": READ | ENCRYPT, "encrypt-write": WRITE | ENCRYPT,
              "encrypt-authenticated-read": READ | AUTHEN, "encrypt-authenticated-write": WRITE | AUTHEN,
              "secure-read": READ | SECURE, "secure-write": WRITE | SECURE, "authorize": 0}


class Refused(Exception):
    """RegisterApplication fails org.bluez.Error.Failed with `text`; `reason` is what
    bluetoothd logs (error())."""

    def __init__(self, text, reason):
        super().__init__(text)
        self.text = text
        self.reason = reason


class Attr:
    """A service, characteristic or descriptor of the application, and its handles."""

    def __init__(self, kind, path, props):
        self.kind, self.path, self.props = kind, path, props
        self.uuid = None
        self.handle = 0            # service: its declaration; characteristic: its value; descriptor: itself
        self.end = 0               # service: its last handle
        self.count = 1             # service: attributes reserved (attr_cnt)
        self.chars, self.descs, self.includes = [], [], []
        self.properties = self.ext = self.perm = self.ccc_perm = 0
        self.flags = []
        self.ccc_handle = self.cep_handle = None
        self.service = self.chrc = None
        self.handled = False

    def describe(self):
        out = {"path": self.path, "uuid": uuid_text(self.uuid) if self.uuid else None, "handle": self.handle}
        if self.kind == "service":
            out.update(end=self.end, primary=bool(self.props.get("Primary")),
                       includes=[s.path for s in self.includes],
                       characteristics=[c.describe() for c in self.chars])
        elif self.kind == "characteristic":
            out.update(flags=self.flags, ccc_handle=self.ccc_handle,
                       descriptors=[d.describe() for d in self.descs])
        else:
            out.update(flags=self.flags)
        return out


def _path(props, name):
    v = props.get(name)
    return str(v) if isinstance(v, dbus.ObjectPath) else None


def _flags(props, table, combine):
    """parse_flags: an array whose first element (at least) is a string, every flag known."""
    v = props.get("Flags")
    if not isinstance(v, dbus.Array) or len(v) == 0:
        return None
    out = []
    for f in v:
        if not isinstance(f, dbus.String) or str(f) not in table:
            return None       # "Invalid characteristic flag" / "Invalid descriptor flag"
        out.append(str(f))
    return combine(out)


def _uuid(props):
    """parse_uuid: a valid UUID string, and not GAP 0x1800 or GATT 0x1801 (BlueZ's own)."""
    v = props.get("UUID")
    u = parse_uuid(v) if isinstance(v, dbus.String) else None
    if u is None or u in ((16, 0x1800), (16, 0x1801)):
        return None
    return u


def _handle(props):
    """parse_handle: optional; a uint16 when present. None when malformed."""
    v = props.get("Handle", dbus.UInt16(0))
    return int(v) if isinstance(v, dbus.UInt16) else None


def collect(objects):
    """The proxies a GDBusClient makes of a GetManagedObjects reply (every object, whatever
    its path; Introspectable and Properties left out), in the reply's order, by kind."""
    by_kind = {SERVICE: [], CHRC: [], DESC: [], PROFILE: []}
    count = 0
    for path, ifaces in objects.items():
        for iface, props in ifaces.items():
            if iface.startswith("org.freedesktop.DBus."):
                continue
            count += 1
            if iface in by_kind:
                by_kind[iface].append((str(path), dict(props)))
    return count, by_kind


def build(objects, taken):
    """client_ready_cb and database_add_app: the application's services with handles, or
    Refused. `taken`: [(start, end)] of the services already in the database. Returns
    (services, profiles)."""
    count, kinds = collect(objects)
    if count == 0:
        raise Refused("No object received", "No object received")
    profiles = []
    for path, props in kinds[PROFILE]:
        uuids = props.get("UUIDs")
        if not isinstance(uuids, dbus.Array) or not [u for u in uuids if isinstance(u, dbus.String)]:
            raise Refused("No valid service object found", f"GattProfile1 {path}: no UUIDs")
        profiles.append(path)
    services = {path: Attr("service", path, props) for path, props in kinds[SERVICE]}
    chars = {}
    for path, props in kinds[CHRC]:
        c = Attr("characteristic", path, props)
        c.service = services.get(_path(props, "Service"))
        if c.service is None:
            raise Refused("No valid service object found", f"Unable to find service for characteristic: {path}")
        parsed = _flags(props, CHRC_FLAGS, _chrc_bits)
        if parsed is None:
            raise Refused("No valid service object found", f"Failed to parse characteristic properties: {path}")
        c.flags, (c.properties, c.ext, c.perm, c.ccc_perm) = parsed
        c.service.count += 2 + (1 if c.properties & (P_NOTIFY | P_INDICATE) else 0) + (1 if c.ext else 0)
        c.service.chars.append(c)
        chars[path] = c
    for path, props in kinds[DESC]:
        d = Attr("descriptor", path, props)
        d.chrc = chars.get(_path(props, "Characteristic"))
        if d.chrc is None:
            raise Refused("No valid service object found", f"Unable to find service for characteristic: {_path(props, 'Characteristic')}")
        parsed = _flags(props, DESC_FLAGS, lambda fs: (fs, _or(DESC_FLAGS[f] for f in fs)))
        if parsed is None:
            raise Refused("No valid service object found", f"Failed to parse descriptor properties: {path}")
        d.flags, d.perm = parsed
        d.service = d.chrc.service
        d.service.count += 1
        d.service.descs.append(d)
        d.chrc.descs.append(d)
    if not services and not profiles:
        raise Refused("No valid service object found", "No valid external GATT objects found")
    ranges = list(taken)
    done = []
    for s in services.values():
        _add_service(s, services, ranges, done)
        done.append(s)
        ranges.append((s.handle, s.end))
    return list(services.values()), profiles


def _or(values):
    out = 0
    for v in values:
        out |= v
    return out


def _chrc_bits(fs):
    props = _or(CHRC_FLAGS[f][0] for f in fs)
    ext = _or(CHRC_FLAGS[f][1] for f in fs)
    if ext:
        props |= P_EXT
    return fs, (props, ext, _or(CHRC_FLAGS[f][2] for f in fs), _or(CHRC_FLAGS[f][3] for f in fs))


def _fail(reason):
    return Refused("Failed to create entry in database", reason)


def _add_service(s, services, ranges, done):
    """database_add_service: UUID, Primary (required), Includes, Handle; then its
    characteristics and their descriptors in order."""
    s.uuid = _uuid(s.props)
    if s.uuid is None:
        raise _fail(f'Failed to read "UUID" property of service {s.path}')
    if not isinstance(s.props.get("Primary"), dbus.Boolean):
        raise _fail(f'Failed to read "Primary" property of service {s.path}')
    inc = s.props.get("Includes")
    if inc is not None:
        if not isinstance(inc, dbus.Array) or not all(isinstance(p, dbus.ObjectPath) for p in inc):
            raise _fail(f'Failed to read "Includes" property of service {s.path}')
        s.count += len(inc)
    handle = _handle(s.props)
    if handle is None:
        raise _fail(f'Failed to read "Handle" property of service {s.path}')
    start = handle or max([e for _, e in ranges] + [0]) + 1     # gatt_db_insert_service
    end = start + s.count - 1
    if end > 0xFFFF or any(a <= end and start <= b for a, b in ranges):
        raise _fail(f"no room for service {s.path} at 0x{start:04x}")
    s.handle, s.end = start, end
    used = {start}
    # Includes (include_services): a service of this application already in the database.
    for p in inc or []:
        target = services.get(str(p))
        if target is not None and target in done:
            h = _next(s, used)
            used.add(h)
            s.includes.append(target)
    for c in s.chars:
        _add_chrc(s, c, used)
    if any(not d.handled for d in s.descs):
        raise _fail("Found descriptor with no matching characteristic!")


def _next(s, used):
    h = max(used) + 1
    if h > s.end:
        raise _fail(f"no room left in service {s.path}")
    return h


def _add_chrc(s, c, used):
    """database_add_chrc: Handle (the value's), UUID, then CCC, CEP and its descriptors."""
    handle = _handle(c.props)
    if handle is None:
        raise _fail(f'Failed to read "Handle" property of characteristic {c.path}')
    c.uuid = _uuid(c.props)
    if c.uuid is None:
        raise _fail(f'Failed to read "UUID" property of characteristic {c.path}')
    if handle:
        if not s.handle < handle - 1 or handle > s.end or {handle - 1, handle} & used:
            raise _fail(f"Failed to create characteristic entry in database: {c.path}")
        decl, value = handle - 1, handle
    else:
        decl = _next(s, used)
        value = decl + 1
        if value > s.end:
            raise _fail(f"no room left in service {s.path}")
    used.update((decl, value))
    c.handle = value
    if c.properties & (P_NOTIFY | P_INDICATE):
        c.ccc_handle = _next(s, used)
        c.ccc_perm |= READ | WRITE
        used.add(c.ccc_handle)
    if c.ext:
        c.cep_handle = _next(s, used)
        used.add(c.cep_handle)
    c.handled = True
    for d in s.descs:
        if d.handled or d.chrc is not c:
            continue
        dh = _handle(d.props)
        if dh is None:
            raise _fail(f'Failed to read "Handle" property of descriptor {d.path}')
        d.uuid = _uuid(d.props)
        if d.uuid is None:
            raise _fail(f'Failed to read "UUID" property of descriptor {d.path}')
        if dh and (dh in used or not s.handle < dh <= s.end):
            raise _fail(f"Failed to create descriptor entry in database: {d.path}")
        d.handle = dh or _next(s, used)
        used.add(d.handle)
        d.handled = True


def written_back(services):
    """write_handle: the attributes whose object has a Handle property it left at 0; bluetoothd
    sets it to the handle it chose. [(path, interface, handle)]."""
    out = []
    for s in services:
        for a, iface in [(s, SERVICE)] + [(c, CHRC) for c in s.chars] + [(d, DESC) for d in s.descs]:
            if "Handle" in a.props and int(a.props["Handle"]) == 0:
                out.append((a.path, iface, a.handle))
    return out
