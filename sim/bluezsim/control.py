"""org.blectl.Simulator1 at /org/blectl/Simulator on its own connection: state,
call log, faults and reset for tests and humans (sim/simctl)."""

import json

import dbus
import dbus.service

from .call import DBusError
from .central import CentralError, public
from .faults import parse_value, FaultError, FAULTS
from .device_faults import DEVICE_FAULTS

IFACE = "org.blectl.Simulator1"
ERRNS = "org.blectl.Simulator.Error."


class ControlError(dbus.DBusException):
    def __init__(self, kind, text):
        super().__init__(text, name=ERRNS + kind)


class Control(dbus.service.Object):
    def __init__(self, conn, sim):
        super().__init__(conn, "/org/blectl/Simulator")
        self.sim = sim

    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def State(self):
        return self.sim.state_json()

    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def Calls(self):
        return json.dumps(self.sim.calls)

    @dbus.service.method(IFACE, in_signature="ss", out_signature="")
    def SetFault(self, name, value):
        try:
            v = parse_value(str(name), str(value))
        except FaultError as e:
            raise ControlError("InvalidArguments", str(e)) from None
        try:
            self.sim.set_fault(str(name), v)
        except Exception as e:
            raise ControlError("Failed", str(e)) from None

    @dbus.service.method(IFACE, in_signature="", out_signature="")
    def ClearFaults(self):
        for name in list(self.sim.faults.values):
            self.sim.set_fault(name, FAULTS[name][1])
        self.sim.clear_device_faults()
        self.sim.start_discovery_busy_left = 0

    @dbus.service.method(IFACE, in_signature="", out_signature="")
    def Reset(self):
        self.sim.reset()

    @dbus.service.method(IFACE, in_signature="", out_signature="")
    def Blink(self):
        """bluetoothd releases org.bluez and takes it again at once, then re-announces its
        objects, all back to back (see Sim.blink_bluez)."""
        try:
            self.sim.blink_bluez()
        except DBusError as e:
            raise ControlError("Failed", e.text) from None

    @dbus.service.method(IFACE, in_signature="ssi", out_signature="")
    def NotifyBurst(self, address, uuid, count):
        """count notifications (value i = i as 4 bytes big-endian) on a notifying
        characteristic of that device, back to back."""
        if count < 1:
            raise ControlError("InvalidArguments", "count must be at least 1")
        try:
            self.sim.notify_burst(str(address), str(uuid), int(count))
        except DBusError as e:
            raise ControlError(e.name.rsplit(".", 1)[-1], e.text) from None

    @dbus.service.method(IFACE, in_signature="sb", out_signature="")
    def DropLink(self, address, remove):
        """The device's link drops (out of range): Connected false; notify sessions kept
        and re-enabled on the next connection as BlueZ 5.66 does; with remove, the device
        object is removed too (see Device.drop_link)."""
        try:
            self.sim.drop_link(str(address), bool(remove))
        except DBusError as e:
            raise ControlError(e.name.rsplit(".", 1)[-1], e.text) from None

    @dbus.service.method(IFACE, in_signature="ssb", out_signature="")
    def DeviceFault(self, address, kind, on):
        """Sets (on) or clears a fault of one device (device_faults.DEVICE_FAULTS)."""
        try:
            self.sim.set_device_fault(str(address), str(kind), bool(on))
        except DBusError as e:
            raise ControlError(e.name.rsplit(".", 1)[-1], e.text) from None

    @dbus.service.method(IFACE, in_signature="s", out_signature="")
    def ClearDeviceFaults(self, address):
        """Clears every fault of that device ("": of every device)."""
        try:
            self.sim.clear_device_faults(str(address))
        except DBusError as e:
            raise ControlError(e.name.rsplit(".", 1)[-1], e.text) from None

    @dbus.service.method(IFACE, in_signature="s", out_signature="s")
    def DeviceState(self, address):
        """One device as JSON: in the tree, advertising, connecting, connected, its faults."""
        try:
            return json.dumps(self.sim.device_state(str(address)))
        except DBusError as e:
            raise ControlError(e.name.rsplit(".", 1)[-1], e.text) from None

    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def DeviceFaults(self):
        return json.dumps(DEVICE_FAULTS)

    @dbus.service.method(IFACE, in_signature="ss", out_signature="")
    def ServiceChanged(self, address, uuid):
        """The connected device changes its GATT database: the service is removed and added
        again at new handles (new object paths), as BlueZ does on Service Changed."""
        try:
            self.sim.service_changed(str(address), str(uuid))
        except DBusError as e:
            raise ControlError(e.name.rsplit(".", 1)[-1], e.text) from None

    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def Faults(self):
        return json.dumps({k: {"default": d, "help": h, "type": t.__name__} for k, (t, d, h) in FAULTS.items()})

    # ------------------------------------------------------------ the other side of the link
    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def Advertisements(self):
        """The registered advertisements (decoded, and the bytes on air) and the refusals."""
        return json.dumps({"advertisements": self.sim.advertising.state(),
                           "refused": self.sim.advertising.refused})

    @dbus.service.method(IFACE, in_signature="s", out_signature="u")
    def ReleaseAdvertisement(self, path):
        """bluetoothd drops the advertisement registered at `path`: Release, then removed."""
        n = self.sim.advertising.release(str(path))
        if n == 0:
            raise ControlError("InvalidArguments", f"no advertisement registered at {path}")
        return n

    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def Applications(self):
        """The registered GATT applications with their handles, and the refusals."""
        return json.dumps({"applications": self.sim.gatt_server.state(), "refused": self.sim.gatt_server.refused})

    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def CentralState(self):
        return json.dumps(self.sim.central.state())

    def _central(self, start, ok, err):
        """Runs a central action; the call is answered when it completes (JSON of the
        operation, or of the central's state for connect/disconnect)."""
        def done(result):
            if isinstance(result, CentralError):
                err(ControlError(result.kind, result.text))
            else:
                ok(json.dumps(public(result) if isinstance(result, dict) else self.sim.central.state()))
        try:
            start(done)
        except CentralError as e:
            raise ControlError(e.kind, e.text) from None

    @dbus.service.method(IFACE, in_signature="q", out_signature="s", async_callbacks=("ok", "err"))
    def CentralConnect(self, mtu, ok, err):
        self._central(lambda done: self.sim.central.connect(int(mtu), done), ok, err)

    @dbus.service.method(IFACE, in_signature="", out_signature="s")
    def CentralDisconnect(self):
        try:
            self.sim.central.disconnect()
        except CentralError as e:
            raise ControlError(e.kind, e.text) from None
        return json.dumps(self.sim.central.state())

    @dbus.service.method(IFACE, in_signature="sq", out_signature="s", async_callbacks=("ok", "err"))
    def CentralRead(self, target, offset, ok, err):
        self._central(lambda done: self.sim.central.read(str(target), int(offset), done), ok, err)

    @dbus.service.method(IFACE, in_signature="saybq", out_signature="s", async_callbacks=("ok", "err"),
                         byte_arrays=True)
    def CentralWrite(self, target, value, command, offset, ok, err):
        self._central(lambda done: self.sim.central.write(str(target), bytes(value), bool(command), int(offset), done),
                      ok, err)

    @dbus.service.method(IFACE, in_signature="sb", out_signature="s", async_callbacks=("ok", "err"))
    def CentralSubscribe(self, target, indicate, ok, err):
        self._central(lambda done: self.sim.central.subscribe(str(target), bool(indicate), done), ok, err)

    @dbus.service.method(IFACE, in_signature="s", out_signature="s", async_callbacks=("ok", "err"))
    def CentralUnsubscribe(self, target, ok, err):
        self._central(lambda done: self.sim.central.unsubscribe(str(target), done), ok, err)
