"""org.bluez.GattDescriptor1 objects: the Client Characteristic Configuration descriptor
(0x2902, its value following the notify sessions) and the other descriptors a world's
characteristic lists (read-only)."""

from .bus import Obj
from .call import DBusError
from .claimed import refuse_write_if_claimed
from .dbus_types import dbus_bytes
from .ifaces import ERR
from .world import u16

CCC_UUID = u16(0x2902)


class Desc:
    def __init__(self, char, handle, uuid=CCC_UUID, value=b""):
        self.char = char
        self.uuid = uuid
        self.value = bytes(value)
        self.path = "%s/desc%04x" % (char.path, handle)
        self.obj = o = Obj(self.path)
        o.ifaces["org.bluez.GattDescriptor1"] = {
            "UUID": ["s", uuid],
            "Characteristic": ["o", char.path],
            "Value": ["ay", b""],
            "Handle": ["q", handle if char.sim.gatt_handles_exported() else None],
        }
        o.handlers["org.bluez.GattDescriptor1"] = self

    def m_ReadValue(self, call, options):
        self.char._check()
        if self.uuid == CCC_UUID:
            val = b"\x01\x00" if self.char.notify_clients else b"\x00\x00"
        else:
            if self.char.sim.faults.get("descriptor_read_never_answers"):
                return
            offset = int(options.get("offset", 0))
            if offset > len(self.value):
                raise DBusError(ERR + "InvalidArguments", "Invalid offset")
            val = self.value
            call.reply("ay", dbus_bytes(val[offset:]))
            self.char.sim.bus.set_prop(self.obj, "org.bluez.GattDescriptor1", "Value", val)
            return
        call.reply("ay", dbus_bytes(val))
        self.char.sim.bus.set_prop(self.obj, "org.bluez.GattDescriptor1", "Value", val)

    def m_WriteValue(self, call, value, options):
        self.char._check()
        refuse_write_if_claimed(self.char)
        raise DBusError(ERR + "NotPermitted", "Write not permitted")
