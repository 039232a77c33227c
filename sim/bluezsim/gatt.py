"""The GATT database of one device as BlueZ exports it: GattService1 objects with their
characteristics (characteristic.py) and descriptors (descriptor.py), Service Changed, the
vendor command protocol's answers, and what the device's link and clients do to all of
them. Handles and paths: gatt_layout.py."""

from .bus import Obj
from .characteristic import Char
from .gatt_layout import FIRST_HANDLE, layout, service_path
from .world import gap, u16

GAP = u16(0x1800)
READD_MS = 100               # Service Changed: the service's objects come back this long after they went


class GattTree:
    FIRST_HANDLE = FIRST_HANDLE

    def __init__(self, sim, device):
        self.sim = sim
        self.device = device
        self.services = []     # (Obj, [Char])
        self.chars = []
        self.next_handle = FIRST_HANDLE
        built = layout(device.spec.services)
        if sim.gap_service_exported() and not any(s.uuid == GAP for s in device.spec.services):
            # Every LE device has Generic Access; the simulator adds it, in the handles below
            # FIRST_HANDLE, where bluetoothd exports it (5.82), so the other paths stay.
            built = layout([gap(device.spec.name or "", device.spec.appearance or 0)], first=0x0001) + built
        # The services of the database, in handle order (Device1.UUIDs once resolved).
        self.service_specs = [s for _, s, _ in built]
        for h, s, char_handles in built:
            self.services.append(self._build(h, s, char_handles))
        self.chars = [ch for _, chars in self.services for ch in chars]
        self.next_handle = 0x0100       # where a service changed by the device goes (Service Changed)

    def _build(self, h, s, char_handles):
        spath = service_path(self.device.path, h)
        so = Obj(spath)
        so.ifaces["org.bluez.GattService1"] = {
            "UUID": ["s", s.uuid], "Device": ["o", self.device.path], "Primary": ["b", True],
            "Includes": ["ao", []], "Handle": ["q", h if self.sim.gatt_handles_exported() else None]}
        so.handlers["org.bluez.GattService1"] = self
        return so, [Char(self, spath, cs, ch) for ch, cs in char_handles]

    # ------------------------------------------------------------ Service Changed
    def service_changed_by(self, char, call):
        """Fault service_changed_on: when `call` is that method, the device changes the
        database under it (the call stays unanswered). Returns whether it did."""
        if self.sim.faults.get("service_changed_on") != call.member:
            return False
        self.sim.set_fault("service_changed_on", "")       # once
        index = next(i for i, (_, chars) in enumerate(self.services) if char in chars)
        self.sim.later(20, self.service_changed, index)
        return True

    def service_uuid_index(self, uuid):
        for i, (so, _) in enumerate(self.services):
            if so.ifaces["org.bluez.GattService1"]["UUID"][1] == uuid:
                return i
        return None

    def service_changed(self, index):
        """The device changed service `index`: BlueZ removes its objects (children first),
        dropping the calls in flight unanswered, and READD_MS later exports it again at new
        handles (new paths), the values kept."""
        so, chars = self.services[index]
        for ch in chars:
            ch.vanish()
        if so.path in self.sim.bus.objects:
            self.sim.bus.unexport_tree(so.path)
        spec = next(s for s in self.device.spec.services if s.uuid == so.ifaces["org.bluez.GattService1"]["UUID"][1])
        (h, _, char_handles), = layout([spec], first=self.next_handle)
        self.next_handle = (h + 0x40) & ~0x0F
        new = self._build(h, spec, char_handles)
        for old, fresh in zip(chars, new[1]):
            fresh.value = old.value
        self.services[index] = new
        self.chars = [ch for _, cs in self.services for ch in cs]

        def readd():
            if self.device.removed or not self.device.gatt_exported or self.services[index] is not new:
                return
            if self.sim.faults.get("service_changed_removes"):
                return          # the device dropped the service from its database
            so_new, chars_new = new
            objs = [so_new]
            for ch in chars_new:
                objs.append(ch.obj)
                if ch.desc is not None:
                    objs.append(ch.desc.obj)
                objs.extend(d.obj for d in ch.extra_descs)
            self.sim.bus.export_many(objs)
        self.sim.later(READD_MS, readd)

    # bluetoothd's gap plugin (profiles/gap/gas.c) claims the Generic Access service, and
    # 5.66's src/gatt-client.c exports no object for a claimed service: a real bluetoothd
    # 5.66 lists 0x1800 in Device1.UUIDs but has no GattService1 for it (make test-real).
    # Its handles stay taken, so the other services keep their object paths. 5.80 and later
    # export claimed services (read-only: ExportClaimedServices).
    CLAIMED = {GAP}

    def objects(self):
        out = []
        for so, chars in self.services:
            if so.ifaces["org.bluez.GattService1"]["UUID"][1] in self.CLAIMED and not self.sim.gap_service_exported():
                continue
            out.append(so)
            for ch in chars:
                out.append(ch.obj)
                if ch.desc is not None:
                    out.append(ch.desc.obj)
                out.extend(d.obj for d in ch.extra_descs)
        return out

    def vendor_rsp(self):
        for ch in self.chars:
            if ch.role == "vendor_rsp":
                return ch
        return None

    def echo_source(self):
        for ch in self.chars:
            if ch.role == "echo_source":
                return ch
        return None

    def vendor_answer(self, cmd):
        v = self.device.spec.vendor
        if v is None:
            return None
        (major, minor, patch), battery = v
        if cmd == 0x01:
            return bytes([0x81, major, minor, patch])
        if cmd == 0x02:
            return bytes([0x82, battery])
        return bytes([0xEE, cmd])

    def link_lost(self, keep_notify=False):
        for ch in self.chars:
            ch.link_lost(keep_notify)

    def rearm(self):
        for ch in self.chars:
            ch.rearm()

    def restart_tickers(self):
        for ch in self.chars:
            if ch.active():
                ch.start_ticker()
            else:
                ch.stop_ticker()

    def forget_calls(self):
        for ch in self.chars:
            ch.forget_calls()

    def client_left(self, sender):
        for ch in self.chars:
            ch.client_left(sender)
